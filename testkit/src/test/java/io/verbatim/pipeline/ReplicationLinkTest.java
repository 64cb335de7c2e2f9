package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.testkit.InterceptedRemote;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

class ReplicationLinkTest {
    private static final Layout ONE = Layout.initial(1, 4, 0);
    private static final long SEED = 0x5EED_0010L;

    @Test
    void aFailedReplicatorIsRestartedWithBackoffUntilEverythingArrives() {
        Fixture f = new Fixture(ONE);
        f.config = f.config.withRetry(Duration.ofMillis(100), Duration.ofSeconds(1), 0.5);
        AtomicBoolean broken = new AtomicBoolean(true);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ReplicationLink link = link(f, breakable(f.b.asRemote(), p -> broken.get()), new SplittableRandom(SEED));
        new PipelineMetricsBinder(link.metrics(), Tags.of("remote_cluster", "b"),
                () -> 0).bindTo(registry);
        // The delays the link must wait: the same schedule, drawn from a generator seeded alike.
        SplittableRandom replay = new SplittableRandom(SEED);
        List<Duration> delays = IntStream.rangeClosed(1, 3).mapToObj(n -> f.config.retry().delay(n, replay)).toList();
        f.produce(0, 100, 20, Compression.LZ4);
        f.a.log(0).seal();

        link.start(); // the first run fails at once
        for (int failure = 1; failure <= 2; failure++) {
            assertFailing(link, failure);
            assertThat(registry.get(PipelineMetricsBinder.FAILING).gauge().value()).isEqualTo(1);
            advance(f, delays.get(failure - 1).minusNanos(1));
            assertThat(link.metrics().restarts()).as("seed %d: not before the backoff", SEED).isEqualTo(failure - 1);
            advance(f, Duration.ofNanos(1));
            assertThat(link.metrics().restarts()).as("seed %d: right after it", SEED).isEqualTo(failure);
        }
        assertFailing(link, 3);
        assertThat(f.b.log(0).entries()).isEmpty();

        broken.set(false);
        advance(f, delays.get(2));
        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, 100).mapToObj(n -> "a/" + n).toList());
        ReplicatorStatus status = link.status().get(0);
        assertThat(status.failing()).isFalse();
        assertThat(status.state()).isEqualTo(SegmentReplicator.State.DONE);
        assertThat(status.restarts()).isEqualTo(3);
        assertThat(status.lastError()).hasValueSatisfying(e -> assertThat(e).contains("storage broken"));
        assertThat(link.failing()).isZero();
        assertThat(registry.get(PipelineMetricsBinder.FAILING).gauge().value()).isZero();
        assertThat(registry.get(PipelineMetricsBinder.RESTARTS).functionCounter().count()).isEqualTo(3);
    }

    /**
     * A connection lost with sends in flight: the first failure ends the pass and cancels the other sends,
     * and a send whose failure arrives as it is subscribed, just after that cancel, must not surface as a
     * dropped error (Reactor logs those at ERROR: the outage demo printed them). Nothing is lost either.
     */
    @Test
    void aSendFailingJustAfterThePassWasCancelledIsNotADroppedError() {
        Fixture f = new Fixture(ONE);
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        Hooks.onErrorDropped(dropped::add);
        try {
            AtomicBoolean connected = new AtomicBoolean();
            Sinks.One<ProducerSession.Receipt> firstReply = Sinks.one();
            ReplicationLink link = link(f, intercepted(f.b.asRemote(), (position, send) -> {
                if (connected.get()) {
                    return send;
                }
                if (position.entryId() == 0) {
                    return firstReply.asMono(); // in flight until the connection is lost
                }
                return Mono.defer(() -> {
                    connected.set(true); // the next pass finds the remote back
                    RemoteException lost = new RemoteException(RemoteException.Kind.UNAVAILABLE, 0, "connection lost");
                    firstReply.tryEmitError(lost); // fails the pass, which cancels this send...
                    return Mono.error(lost); // ...before it fails too
                });
            }), new SplittableRandom(SEED));
            for (int i = 0; i < 10; i++) {
                f.produce(i, 1, 1, Compression.NONE); // one entry each
            }
            f.a.log(0).seal();

            link.start();
            advance(f, Duration.ofSeconds(5));

            assertThat(dropped).as("errors nobody received").isEmpty();
            assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                    IntStream.range(0, 10).mapToObj(n -> "a/" + n).toList());
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }

    /** Sends failing together reach the pass's end as one composite failure: a rewind, not a restart. */
    @Test
    void sendsThatFailTogetherAreRetriedLikeOneThatFails() {
        Fixture f = new Fixture(ONE);
        Set<Long> tried = ConcurrentHashMap.newKeySet();
        ReplicationLink link = link(f, intercepted(f.b.asRemote(), (position, send) -> position.entryId() == 3
                && tried.add(position.entryId())
                ? Mono.error(Exceptions.multiple(
                        new RemoteException(RemoteException.Kind.UNAVAILABLE, 0, "connection lost"),
                        new RemoteException(RemoteException.Kind.UNAVAILABLE, 0, "connection lost")))
                : send), new SplittableRandom(SEED));
        for (int i = 0; i < 10; i++) {
            f.produce(i, 1, 1, Compression.NONE); // one entry each
        }
        f.a.log(0).seal();

        link.start();
        advance(f, Duration.ofSeconds(5));

        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, 10).mapToObj(n -> "a/" + n).toList());
        assertThat(link.metrics().restarts()).as("a rewind, not a failed replicator").isZero();
        assertThat(link.metrics().rewinds()).isEqualTo(1);
    }

    @Test
    void failuresInARowResetOnceARestartedReplicatorMakesProgress() {
        Fixture f = new Fixture(ONE); // retry: 10 ms doubling, no jitter
        Set<Long> tried = ConcurrentHashMap.newKeySet();
        // Entries 5 and 10 each fail their first send: two failures, with progress between them.
        ReplicationLink link = link(f, breakable(f.b.asRemote(),
                p -> (p.entryId() == 5 || p.entryId() == 10) && tried.add(p.entryId())), new SplittableRandom(SEED));
        for (int i = 0; i < 20; i++) {
            f.produce(i, 1, 1, Compression.NONE); // one entry each
        }
        f.a.log(0).seal();
        link.start();
        assertFailing(link, 1);
        advance(f, Duration.ofMillis(10));
        assertThat(link.metrics().restarts()).isEqualTo(1);
        assertFailing(link, 1); // entries 5..9 went through (progress), then entry 10 failed: one in a row again
        advance(f, Duration.ofMillis(10)); // the first backoff again, not the second (20 ms)
        assertThat(link.metrics().restarts()).isEqualTo(2);
        assertThat(f.deliveredToB()).hasSize(20).doesNotHaveDuplicates();
        assertThat(link.status().get(0).failing()).isFalse();
    }

    @Test
    void aStoppedLinkRestartsNothing() {
        Fixture f = new Fixture(ONE);
        AtomicBoolean broken = new AtomicBoolean(true);
        ReplicationLink link = link(f, breakable(f.b.asRemote(), p -> broken.get()), new SplittableRandom(SEED));
        f.produce(0, 10, 5, Compression.NONE);
        link.start();
        assertFailing(link, 1);
        link.stop();
        advance(f, Duration.ofMinutes(10));
        assertThat(link.metrics().restarts()).isZero();
        assertThat(f.b.log(0).entries()).isEmpty();

        broken.set(false);
        link.start(); // a new start runs it at once, without counting a restart
        advance(f, Duration.ofMillis(1));
        assertThat(f.deliveredToB()).hasSize(10);
        assertThat(link.metrics().restarts()).isZero();
        assertThat(link.failing()).isZero();
    }

    /**
     * Ownership moving between two links of one topic (two broker processes): the one that loses a segment
     * stops its replicator at once, the one that gains it starts from the durable cursor, and nothing is lost
     * or repeated; a segment given back later starts again.
     */
    @Test
    void aSegmentWhoseOwnershipMovesIsStoppedByTheLoserAndStartedByTheGainerFromTheCursor() {
        Fixture f = new Fixture(Layout.initial(2, 4, 0));
        AtomicBoolean firstOwnsZero = new AtomicBoolean(true);
        ReplicationLink first = ReplicationLink.builder().local(f.a).remote(f.b.asRemote()).config(f.config)
                .owned(s -> s.id() == 1 || firstOwnsZero.get()).timer(f.clock).cpu(f.clock).build().start();
        ReplicationLink second = ReplicationLink.builder().local(f.a).remote(f.b.asRemote()).config(f.config)
                .owned(s -> s.id() == 0 && !firstOwnsZero.get()).timer(f.clock).cpu(f.clock).build().start();
        f.produce(0, 20, 5, Compression.NONE);
        advance(f, Duration.ofSeconds(1));
        assertThat(second.status()).isEmpty();

        assertThat(f.deliveredToB()).hasSize(20);
        firstOwnsZero.set(false);
        first.reconsider();
        f.produce(20, 20, 5, Compression.NONE);
        advance(f, Duration.ofSeconds(1));
        int whileUnowned = f.deliveredToB().size();
        assertThat(whileUnowned).as("segment 1's new entries only: 0 has no owner now").isBetween(21, 39);
        second.reconsider();
        advance(f, Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(40);
        assertThat(second.status()).extracting(ReplicatorStatus::segment)
                .containsExactly(f.a.layout().segment(0).orElseThrow().descriptor());
        assertThat(first.status()).filteredOn(s -> s.segment().equals(f.a.layout().segment(0).orElseThrow().descriptor()))
                .singleElement().satisfies(s -> assertThat(s.state()).isNotEqualTo(SegmentReplicator.State.DONE));

        firstOwnsZero.set(true);
        second.reconsider();
        first.reconsider();
        f.produce(40, 20, 5, Compression.NONE);
        advance(f, Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(60).doesNotHaveDuplicates();
        assertThat(first.caughtUp()).isTrue();
        assertThat(second.caughtUp()).isTrue();
    }

    /**
     * A move (issue 25): the link giving a segment up hands it over, reading no more and waiting for what it sent,
     * so the link taking it over starts where the first one's sends ended and sends none of them again (a remote
     * split in between would have sent them to a child, which knows nothing of what its parent took).
     */
    @Test
    void aSegmentHandedOverIsAnsweredBeforeTheNextOwnerStartsSoNothingIsSentTwice() {
        Map<SourcePosition, Integer> sends = moved(true);
        assertThat(sends).hasSize(30).allSatisfy((position, times) -> assertThat(times).as("sends of " + position)
                .isOne());
    }

    /** The same move without a hand-over: what was in flight is sent again by the next owner. */
    @Test
    void aSegmentStoppedAtOnceIsSentAgainFromTheCursorByTheNextOwner() {
        Map<SourcePosition, Integer> sends = moved(false);
        assertThat(sends).hasSize(30).containsValue(2);
    }

    /**
     * 20 entries in flight (answered 100 ms after they are sent) when the first link loses segment 0, handing it over
     * or not; the second takes it over and replicates 10 more. Returns how often each position was sent.
     */
    private static Map<SourcePosition, Integer> moved(boolean handOver) {
        Fixture f = new Fixture(ONE);
        Map<SourcePosition, Integer> sends = new ConcurrentHashMap<>();
        RemoteCluster slow = intercepted(f.b.asRemote(), (position, send) -> {
            sends.merge(position, 1, Integer::sum);
            return Mono.delay(Duration.ofMillis(100), f.clock).then(send);
        });
        AtomicBoolean firstOwns = new AtomicBoolean(true);
        ReplicationLink first = ReplicationLink.builder().local(f.a).remote(slow).config(f.config)
                .owned(s -> firstOwns.get()).handsOver(s -> handOver).timer(f.clock).cpu(f.clock).build().start();
        List<Long> handedOver = new ArrayList<>();
        first.handedOver().subscribe(handedOver::add);
        for (int i = 0; i < 20; i++) {
            f.produce(i, 1, 1, Compression.NONE);
        }
        advance(f, Duration.ofMillis(50));
        assertThat(sends).as("in flight").hasSize(20);
        firstOwns.set(false);
        first.reconsider();
        assertThat(first.handingOver(0)).isEqualTo(handOver);
        advance(f, Duration.ofMillis(100));
        assertThat(first.handingOver(0)).isFalse();
        assertThat(handedOver).isEqualTo(handOver ? List.of(0L) : List.of());

        ReplicationLink second = ReplicationLink.builder().local(f.a).remote(slow).config(f.config).timer(f.clock)
                .cpu(f.clock).build().start();
        for (int i = 20; i < 30; i++) {
            f.produce(i, 1, 1, Compression.NONE);
        }
        advance(f, Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(30).doesNotHaveDuplicates();
        assertThat(second.caughtUp()).isTrue();
        return sends;
    }

    @Test
    void aCompletedSealedSegmentIsDoneForGood() {
        Fixture f = new Fixture(ONE);
        AtomicInteger opened = new AtomicInteger();
        LocalSegments counting = new CountingSegments(f.a, opened);
        ReplicationLink link = ReplicationLink.builder().local(counting).remote(f.b.asRemote()).config(f.config)
                .timer(f.clock).cpu(f.clock).build().start();
        f.produce(0, 10, 5, Compression.NONE);
        f.a.apply(Mutation.split(0)).layoutOrThrow(); // seals 0; its replicator drains it and completes
        advance(f, Duration.ofSeconds(1));
        f.a.apply(Mutation.rebucket(1, 8)).layoutOrThrow(); // more layouts: 0 must not start again
        link.stop();
        link.start();
        advance(f, Duration.ofSeconds(1));
        assertThat(link.status()).filteredOn(s -> s.segment().equals(ONE.segment(0).orElseThrow().descriptor()))
                .singleElement().satisfies(s -> assertThat(s.state()).isEqualTo(SegmentReplicator.State.DONE));
        assertThat(opened.get()).as("segment 0's cursor opened once").isEqualTo(1);
        assertThat(f.deliveredToB()).hasSize(10);
    }

    @Test
    void aReplicatorWhoseBudgetErrsIsRestarted() {
        Fixture f = new Fixture(ONE, ONE.apply(Mutation.split(0), 0, 0).layoutOrThrow()); // b is finer: re-batching
        AtomicInteger asked = new AtomicInteger();
        f.budget = (id, bytes, codec) -> asked.incrementAndGet() <= 2 ? Mono.error(new IllegalStateException(
                "budget " + id + " is broken")) : Mono.just(() -> { });
        f.produce(0, 50, 20, Compression.ZSTD);
        f.a.log(0).seal();
        ReplicationLink link = link(f, f.b.asRemote(), new SplittableRandom(SEED));
        link.start();
        assertFailing(link, 1);
        advance(f, Duration.ofSeconds(1));
        assertThat(link.metrics().restarts()).isEqualTo(2);
        assertThat(f.deliveredToB()).hasSize(50).doesNotHaveDuplicates();
        assertThat(link.status().get(0).state()).isEqualTo(SegmentReplicator.State.DONE);
        assertThat(link.failing()).isZero();
    }

    /**
     * A segment pruned while its replicator runs (its backlog expired past the message TTL while the remote did not
     * answer the exchange): the replicator is stopped and counts as done, rather than waiting for ever on a segment
     * that is gone; the children's replicators go on.
     */
    @Test
    void aReplicatorWhoseSegmentIsPrunedUnderItIsStopped() {
        Fixture f = new Fixture(ONE);
        Duration ttl = Duration.ofMinutes(1);
        f.config = f.config.withMessageTtl(ttl);
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger cancelled = new AtomicInteger();
        ExchangeGate silent = remote -> Flux.<ExchangeGate.Readiness>never()
                .doOnSubscribe(x -> runs.incrementAndGet()).doOnCancel(cancelled::incrementAndGet);
        ReplicationLink link = ReplicationLink.builder().local(f.a).remote(f.b.asRemote()).config(f.config)
                .budget(f.budget).exchangeGate(silent).timer(f.clock).cpu(f.clock).random(new SplittableRandom(SEED))
                .build();
        f.produce(0, 10, 20, Compression.LZ4);
        link.start();
        advance(f, Duration.ofSeconds(1));
        assertThat(link.status()).singleElement().satisfies(
                s -> assertThat(s.state()).isEqualTo(SegmentReplicator.State.WAITING_FOR_EXCHANGE));
        f.a.apply(Mutation.split(0)).layoutOrThrow();
        f.a.log(0).seal();
        advance(f, ttl.plusSeconds(1));
        assertThat(f.a.prune(0, ttl.toMillis())).as("its backlog expired").isTrue();
        advance(f, Duration.ofSeconds(1));

        assertThat(link.status()).as("the pruned segment is forgotten, its children replicate")
                .extracting(ReplicatorStatus::segment).doesNotContain(ONE.segment(0).orElseThrow().descriptor())
                .hasSize(2);
        assertThat(cancelled.get()).as("the pruned segment's replicator was stopped").isEqualTo(1);
        assertThat(runs.get()).isEqualTo(3);
        assertThat(link.failing()).isZero();
        link.stop();
    }

    /**
     * Issue 23: across a partition a replicator rewinds and reconnects again and again, sends time out and
     * nothing is acknowledged, yet nothing ends it: it never counted as failing, and status showed 0 failing
     * while it stood still. With backlog and nothing acknowledged for the stall threshold it is stalled, for as
     * long as it has not moved; the first acknowledgement ends that.
     */
    @Test
    void aReplicatorThatKeepsRewindingWithBacklogIsStalledNotFailingAndSaysForHowLong() {
        Fixture f = new Fixture(ONE);
        f.config = f.config.withSendTimeout(Duration.ofSeconds(1));
        AtomicBoolean partitioned = new AtomicBoolean(true);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ReplicationLink link = ReplicationLink.builder().local(f.a)
                .remote(intercepted(f.b.asRemote(), (position, send) -> partitioned.get() ? Mono.never() : send))
                .config(f.config).timer(f.clock).cpu(f.clock).random(new SplittableRandom(SEED))
                .stallAfter(Duration.ofSeconds(2)).build();
        new PipelineMetricsBinder(link.metrics(), Tags.of("remote_cluster", "b"), () -> 0, link::status)
                .bindTo(registry);
        f.produce(0, 10, 10, Compression.NONE);
        link.start();

        advance(f, Duration.ofMillis(1999));
        assertThat(link.status()).singleElement().satisfies(s -> {
            assertThat(s.backlog()).isPositive();
            assertThat(s.stalled()).as("not yet: below the threshold").isFalse();
        });
        advance(f, Duration.ofMillis(8001));
        assertThat(link.metrics().rewinds()).as("timed out and rewound, again and again").isGreaterThan(3);
        assertThat(link.status()).singleElement().satisfies(s -> {
            assertThat(s.failing()).isFalse();
            assertThat(s.stalledFor()).hasValue(Duration.ofSeconds(10));
        });
        assertThat(link.stalled()).hasSize(1);
        assertThat(link.failing()).isZero();
        assertThat(registry.get(PipelineMetricsBinder.STALLED).gauge().value()).isEqualTo(1);
        assertThat(registry.get(PipelineMetricsBinder.STALLED_SECONDS).gauge().value()).isEqualTo(10.0);

        partitioned.set(false);
        advance(f, Duration.ofSeconds(2));
        assertThat(f.deliveredToB()).hasSize(10);
        assertThat(link.status()).singleElement().satisfies(s -> {
            assertThat(s.backlog()).isZero();
            assertThat(s.stalled()).isFalse();
        });
        assertThat(registry.get(PipelineMetricsBinder.STALLED).gauge().value()).isZero();
    }

    /**
     * Issue 23: after a long partition a replicator's backoff has grown to its maximum (a minute by default), and
     * it sat that out after the heal. The remote reached again ends the wait.
     */
    @Test
    void aRemoteReachedAgainEndsABackoffThatGrewWhileItWasAway() {
        Fixture f = new Fixture(ONE);
        f.config = f.config.withRetry(Duration.ofMillis(100), Duration.ofMinutes(1), 0);
        AtomicBoolean partitioned = new AtomicBoolean(true);
        Sinks.Many<Long> reached = Sinks.many().multicast().directBestEffort();
        RemoteCluster cut = intercepted(f.b.asRemote(), (position, send) -> partitioned.get()
                ? Mono.error(new RemoteException(RemoteException.Kind.UNAVAILABLE, 0, "connection refused")) : send);
        RemoteCluster remote = new RemoteCluster() {
            @Override
            public String name() {
                return cut.name();
            }

            @Override
            public Flux<Layout> layouts() {
                return cut.layouts();
            }

            @Override
            public ProducerSession open(long segmentId, String producerName) {
                return cut.open(segmentId, producerName);
            }

            @Override
            public Flux<Long> reachedAgain() {
                return reached.asFlux();
            }
        };
        ReplicationLink link = link(f, remote, new SplittableRandom(SEED)).start();
        f.produce(0, 10, 10, Compression.NONE);
        advance(f, Duration.ofMinutes(10));
        assertThat(link.metrics().rewinds()).as("backed off to a minute").isBetween(10L, 20L);
        assertThat(f.deliveredToB()).isEmpty();

        partitioned.set(false);
        reached.tryEmitNext(0L);
        advance(f, Duration.ofMillis(1));
        assertThat(f.deliveredToB()).as("at once, not a minute later").hasSize(10);
    }

    /** A replicator idle for an hour that gets an entry it cannot send is stalled from that entry on, not the hour. */
    @Test
    void aReplicatorStallsFromTheWorkItCannotSendNotFromItsLastAcknowledgement() {
        Fixture f = new Fixture(ONE);
        f.config = f.config.withSendTimeout(Duration.ofSeconds(1));
        AtomicBoolean partitioned = new AtomicBoolean();
        ReplicationLink link = ReplicationLink.builder().local(f.a)
                .remote(intercepted(f.b.asRemote(), (position, send) -> partitioned.get() ? Mono.never() : send))
                .config(f.config).timer(f.clock).cpu(f.clock).random(new SplittableRandom(SEED))
                .stallAfter(Duration.ofSeconds(2)).build().start();
        f.produce(0, 1, 1, Compression.NONE);
        advance(f, Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(1);
        advance(f, Duration.ofHours(1));
        assertThat(link.status()).singleElement().satisfies(s -> assertThat(s.stalled()).as("idle").isFalse());

        partitioned.set(true);
        f.produce(1, 1, 1, Compression.NONE);
        advance(f, Duration.ofMillis(1999));
        assertThat(link.stalled()).as("new work, not yet the threshold").isEmpty();
        advance(f, Duration.ofMillis(1001));
        assertThat(link.status()).singleElement().satisfies(s ->
                assertThat(s.stalledFor()).hasValue(Duration.ofSeconds(3)));
    }

    private static ReplicationLink link(Fixture f, RemoteCluster remote, SplittableRandom random) {
        return ReplicationLink.builder().local(f.a).remote(remote).config(f.config).budget(f.budget).timer(f.clock)
                .cpu(f.clock).random(random).build();
    }

    private static void assertFailing(ReplicationLink link, int inARow) {
        assertThat(link.status()).singleElement().satisfies(s -> {
            assertThat(s.failing()).isTrue();
            assertThat(s.consecutiveFailures()).isEqualTo(inARow);
            assertThat(s.state()).isEqualTo(SegmentReplicator.State.FAILED);
            assertThat(s.id()).isEqualTo("a:" + MemorySegments.DEFAULT_TOPIC
                    + "/" + s.segment() + "-->b");
        });
        assertThat(link.failing()).isEqualTo(1);
        assertThat(link.metrics().failing()).isEqualTo(1);
    }

    private static void advance(Fixture f, Duration d) {
        f.clock.advanceTimeBy(d);
    }

    /** {@code remote}, but a send of a position {@code broken} selects fails with a broken invariant. */
    private static RemoteCluster breakable(RemoteCluster remote, Predicate<SourcePosition> broken) {
        return intercepted(remote, (position, send) -> broken.test(position)
                ? Mono.error(new IllegalStateException("storage broken at " + position)) : send);
    }

    /** {@code remote}, each send going through {@code interceptor} (given the position and the real send). */
    private static RemoteCluster intercepted(RemoteCluster remote,
            BiFunction<SourcePosition, Mono<ProducerSession.Receipt>, Mono<ProducerSession.Receipt>> interceptor) {
        return InterceptedRemote.of(remote, (entry, position, send) -> interceptor.apply(position, send));
    }

    /** {@code delegate}, counting how often a cursor of segment 0 is opened. */
    private record CountingSegments(LocalSegments delegate, AtomicInteger opened) implements LocalSegments {
        @Override
        public String topic() {
            return delegate.topic();
        }

        @Override
        public Layout layout() {
            return delegate.layout();
        }

        @Override
        public Flux<Layout> layouts() {
            return delegate.layouts();
        }

        @Override
        public SourceSegmentLog log(long segmentId) {
            SourceSegmentLog log = delegate.log(segmentId);
            return new SourceSegmentLog() {
                @Override
                public long segmentId() {
                    return segmentId;
                }

                @Override
                public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
                    if (segmentId == 0) {
                        opened.incrementAndGet();
                    }
                    return log.cursor(name, startAt);
                }
            };
        }

        @Override
        public DrainGate drainGate() {
            return delegate.drainGate();
        }

        @Override
        public long backlog(long segmentId, String cursorName) {
            return delegate.backlog(segmentId, cursorName);
        }
    }
}
