package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.BudgetConfig;
import io.verbatim.budget.BudgetMetricsBinder;
import io.verbatim.budget.SlowPathBudget;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.embedded.SendFault;
import io.verbatim.embedded.SendFaults;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;

class SegmentReplicatorTest {
    private static final Layout ONE = Layout.initial(1, 4, 0);
    private static final Layout SPLIT = ONE.apply(Mutation.split(0), 0, 0).layoutOrThrow();

    @Test
    void fastPathForwardsEntriesVerbatimAndNeverAsksTheBudget() {
        Fixture f = new Fixture(ONE);
        PublisherProbe<SlowPathBudget.Permit> probe = PublisherProbe.of(Mono.just(() -> { }));
        f.budget = (id, bytes, codec) -> probe.mono();
        f.produce(0, 200, 50, Compression.LZ4);
        f.a.log(0).seal();
        StepVerifier.withVirtualTime(() -> f.replicator(0).run(), () -> f.clock, Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(1))
                .verifyComplete();
        probe.assertWasNotSubscribed();
        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, 200).mapToObj(n -> "a/" + n).toList());
        assertThat(f.metrics.verbatimEntries()).isEqualTo(f.a.log(0).size());
        assertThat(f.metrics.rebatchedEntries()).isZero();
        for (var stored : f.b.log(0).entries()) {
            Entry copy = Entry.parse(stored.bytes());
            assertThat(copy.metadata().getReplicatedFrom()).isEqualTo("a");
            SourcePosition from = copy.sourcePosition().orElseThrow();
            Entry source = Entry.parse(f.a.log(0).entries().get((int) from.entryId()).bytes());
            assertThat(copy.payload()).isEqualTo(source.payload());
        }
    }

    @Test
    void slowPathRebatchesTowardAFinerRemoteThroughTheBudget() {
        Fixture f = new Fixture(ONE, SPLIT);
        PublisherProbe<SlowPathBudget.Permit> probe = PublisherProbe.of(Mono.just(() -> { }));
        f.budget = (id, bytes, codec) -> probe.mono();
        f.produce(0, 300, 80, Compression.ZSTD);
        f.a.log(0).seal();
        StepVerifier.withVirtualTime(() -> f.replicator(0).run(), () -> f.clock, Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(1))
                .verifyComplete();
        probe.assertWasSubscribed();
        assertThat(f.metrics.rebatchedEntries()).isPositive();
        assertThat(f.metrics.rebatchedParts()).isGreaterThan(f.metrics.rebatchedEntries());
        assertThat(f.deliveredToB()).hasSize(300).doesNotHaveDuplicates();
        Invariants.checkPlacement(f.b);
        // A part keeps the source codec and says which part of which entry it is.
        Entry part = Entry.parse(f.b.log(1).entries().get(0).bytes());
        assertThat(part.metadata().getCompression()).isEqualTo(Compression.ZSTD.proto());
        assertThat(part.sourcePosition().orElseThrow().isWhole()).isFalse();
    }

    @Test
    void partsCanBeSentUncompressed() {
        Fixture f = new Fixture(ONE, SPLIT);
        f.config = f.config.withPartsCodec(PartsCodec.NONE);
        f.produce(0, 50, 20, Compression.ZLIB);
        f.a.log(0).seal();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(f.b.log(1).entries()).isNotEmpty().allSatisfy(e ->
                assertThat(Entry.parse(e.bytes()).metadata().getCompression()).isEqualTo(Compression.NONE.proto()));
    }

    @Test
    void entriesFromAnotherClusterAreNeverReplicatedAgain() {
        Fixture f = new Fixture(ONE);
        f.produce(0, 10, 5, Compression.NONE);
        Entry foreign = Entry.parse(f.a.log(0).entries().get(0).bytes())
                .restamp(new ReplicationStamp("c", SourcePosition.of(7, 7)));
        f.a.log(0).append(ByteBuffer.wrap(foreign.toByteArray()));
        f.a.log(0).seal();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(f.metrics.skippedReplicated()).isEqualTo(1);
        assertThat(f.b.log(0).entries()).allSatisfy(e ->
                assertThat(Entry.parse(e.bytes()).metadata().getReplicatedFrom()).isEqualTo("a"));
        assertThat(f.a.log(0).existingCursor("pulsar.repl.b").orElseThrow().backlog()).isZero();
    }

    @Test
    void entriesOlderThanTheMessageTtlAreSkippedAndAcknowledged() {
        Fixture f = new Fixture(ONE);
        f.config = f.config.withMessageTtl(Duration.ofMinutes(1));
        f.produce(0, 10, 5, Compression.NONE); // published at t = 0
        f.advance(Duration.ofMinutes(2));
        f.produce(10, 10, 5, Compression.NONE); // published at t = 2 min
        f.a.log(0).seal();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(10, 20).mapToObj(n -> "a/" + n).toList());
        assertThat(f.metrics.expired()).isPositive();
        assertThat(f.a.log(0).existingCursor("pulsar.repl.b").orElseThrow().backlog()).isZero();
    }

    @Test
    void aNewCursorAtLatestSkipsWhatWasWrittenBefore() {
        Fixture f = new Fixture(ONE);
        var fresh = new MemorySegments("a", ONE, f.clock);
        fresh.produce(Fixture.messages(0, 10, 5), Compression.NONE);
        fresh.replicateTo("b", StartAt.LATEST);
        fresh.produce(Fixture.messages(10, 10, 5), Compression.NONE);
        fresh.log(0).seal();
        SegmentReplicator r = SegmentReplicator.builder().config(f.config.withStartAt(StartAt.LATEST))
                .topic(fresh.topic())
                .source(fresh.layout().segment(0).orElseThrow(), fresh.log(0)).drainGate(fresh.drainGate())
                .remote(f.b.asRemote()).timer(f.clock).cpu(f.clock).build();
        r.run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(10, 20).mapToObj(n -> "a/" + n).toList());
    }

    @Test
    void aChildPublishesOnlyAfterItsParentsCursorDrained() {
        Fixture f = new Fixture(ONE);
        f.produce(0, 40, 10, Compression.NONE); // into segment 0
        f.a.apply(Mutation.split(0)).layoutOrThrow(); // seals 0, creates 1 and 2
        f.produce(40, 40, 10, Compression.NONE); // into the children
        SegmentReplicator lower = f.replicator(1);
        f.replicator(2).run().subscribe();
        lower.run().subscribe();
        f.advance(Duration.ofSeconds(5));
        assertThat(lower.state()).isEqualTo(SegmentReplicator.State.WAITING_FOR_PARENTS);
        assertThat(f.b.log(0).entries()).as("the children wait for the parent's cursor").isEmpty();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(80);
        // Per key, every parent message precedes every child message.
        Invariants.checkDelivery(singleOrigin(f), false);
    }

    @Test
    void anEmptyParentDoesNotOpenTheGateWhileAGrandparentHasBacklog() {
        Fixture f = new Fixture(ONE);
        f.produce(0, 40, 10, Compression.NONE); // into 0
        f.a.apply(Mutation.split(0)).layoutOrThrow(); // 1, 2
        f.a.apply(Mutation.split(1)).layoutOrThrow(); // 1 was empty: 3, 4
        f.produce(40, 40, 10, Compression.NONE); // into 2, 3 and 4
        for (long id = 1; id <= 4; id++) {
            f.replicator(id).run().subscribe();
        }
        f.advance(Duration.ofSeconds(5));
        assertThat(f.b.log(0).entries()).as("no grandchild goes ahead of the grandparent").isEmpty();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(80);
        Invariants.checkDelivery(singleOrigin(f), false);
    }

    @Test
    void aSealedSegmentWithReplicationBacklogIsNotDeletedUntilDrainedOrExpired() {
        Fixture f = new Fixture(ONE);
        f.produce(0, 10, 5, Compression.NONE);
        f.a.apply(Mutation.split(0)).layoutOrThrow();
        assertThat(f.a.sealedSegmentsPinned(0)).isEqualTo(1);
        assertThat(f.a.prune(0, 0)).as("backlog pins it").isFalse();
        f.advance(Duration.ofMinutes(10));
        assertThat(f.a.prune(0, Duration.ofHours(1).toMillis())).as("backlog younger than the TTL").isFalse();
        assertThat(f.a.prune(0, Duration.ofMinutes(5).toMillis())).as("backlog past the TTL").isTrue();

        Fixture g = new Fixture(ONE);
        g.produce(0, 10, 5, Compression.NONE);
        g.a.apply(Mutation.split(0)).layoutOrThrow();
        g.replicator(0).run().subscribe();
        g.advance(Duration.ofSeconds(1));
        assertThat(g.a.sealedSegmentsPinned(0)).isZero();
        assertThat(g.a.prune(0, 0)).as("drained").isTrue();
        assertThat(g.a.prune(1, 0)).as("active segments are never pruned").isFalse();
    }

    @Test
    void reroutesWhenTheRemoteSealsADestinationMidStream() {
        Fixture f = new Fixture(ONE);
        f.b.faults(SendFaults.roundTrip(Duration.ofMillis(50)));
        f.produce(0, 100, 30, Compression.LZ4);
        Disposable run = f.replicator(0).run().subscribe();
        f.advance(Duration.ofMillis(20)); // sends in flight
        f.b.apply(Mutation.split(0)).layoutOrThrow(); // b seals segment 0 under them
        f.produce(100, 100, 30, Compression.LZ4);
        f.advance(Duration.ofMillis(20));
        f.b.apply(Mutation.rebucket(1, 8)).layoutOrThrow();
        f.produce(200, 100, 30, Compression.LZ4);
        f.a.log(0).seal();
        f.advance(Duration.ofSeconds(10));
        assertThat(run.isDisposed()).as("completed").isTrue();
        assertThat(f.deliveredToB()).hasSize(300).doesNotHaveDuplicates();
        Invariants.checkPlacement(f.b);
        Invariants.checkDelivery(singleOrigin(f), false);
    }

    /**
     * Entries the remote took, held behind an earlier one whose receipt the connection lost, are not sent again
     * after the rewind: the remote split meanwhile, and its children (as new Pulsar topics) do not know what their
     * parent took, so each would be stored twice. The one whose receipt was lost may be (J3's ambiguous send).
     */
    @Test
    void entriesTheRemoteTookAreNotSentAgainAfterARewindIntoItsChildren() {
        Fixture f = new Fixture(ONE);
        f.b.inheritDeduplication(false);
        SourcePosition slow = SourcePosition.of(0, 3);
        f.b.faults((segment, producer, position) -> new SendFault.Delay(
                position.equals(slow) ? Duration.ofMillis(100) : Duration.ofMillis(5)));
        for (int i = 0; i < 12; i++) {
            f.produce(i * 10, 10, 1, Compression.LZ4); // one key: one entry per call, all in bucket order
        }
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofMillis(50)); // entries 4.. taken, waiting behind entry 3
        f.b.disconnectAll(); // entry 3's receipt is lost: the pass rewinds
        f.b.faults(SendFaults.NONE);
        f.b.apply(Mutation.split(0)).layoutOrThrow();
        f.a.log(0).seal();
        f.advance(Duration.ofSeconds(10));
        Set<String> entry3 = IntStream.range(30, 40).mapToObj(n -> "a/" + n)
                .collect(Collectors.toSet());
        List<String> delivered = f.deliveredToB();
        assertThat(new HashSet<>(delivered)).hasSize(120);
        assertThat(delivered.stream().filter(id -> !entry3.contains(id)).toList()).as("stored once")
                .doesNotHaveDuplicates();
    }

    /**
     * A re-batched entry partly taken when the remote's layout changes is planned again without the messages the
     * remote took, its parts numbered after the earlier plan's: the part segment 2 took is not sent again (it
     * would be, as a later part index, and stored twice), and no new part reuses an index a destination has seen.
     * Only the part whose receipt was lost (an ambiguous send across the seal, J3) may be stored twice.
     */
    @Test
    void aPartlyTakenReBatchedEntryIsPlannedAgainWithoutWhatTheRemoteTook() {
        Fixture f = new Fixture(ONE, SPLIT);
        f.b.faults((segment, producer, position) -> new SendFault.Delay(
                segment == 1 ? Duration.ofMillis(100) : Duration.ofMillis(5)));
        for (int i = 0; i < 12; i++) {
            f.produce(i * 10, 10, 10, Compression.LZ4);
        }
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofMillis(50)); // segment 2 took its parts; segment 1's receipts are under way
        f.b.disconnectAll(); // and lost: the pass rewinds
        f.b.faults(SendFaults.NONE);
        f.b.apply(Mutation.split(1)).layoutOrThrow();
        f.a.log(0).seal();
        f.advance(Duration.ofSeconds(10));
        var stored = Invariants.stored(f.b);
        Set<String> ambiguous = stored.stream().filter(x -> x.segmentId() == 1)
                .map(x -> x.origin() + "/" + x.counter()).collect(Collectors.toSet());
        List<String> delivered = f.deliveredToB();
        assertThat(new HashSet<>(delivered)).hasSize(120);
        assertThat(f.metrics.rebatchedEntries()).isPositive();
        assertThat(delivered.stream().filter(id -> !ambiguous.contains(id)).toList()).as("stored once")
                .doesNotHaveDuplicates();
        Invariants.checkPlacement(f.b);
    }

    @Test
    void startsOnlyOnceTheRemoteAnsweredTheExchange() {
        Fixture f = new Fixture(ONE);
        Sinks.One<ExchangeGate.Readiness> answer = Sinks.one();
        f.exchangeGate = remote -> answer.asMono().flux();
        f.produce(0, 10, 5, Compression.NONE);
        SegmentReplicator r = f.replicator(0);
        r.run().subscribe();
        f.advance(Duration.ofMinutes(1));
        assertThat(r.state()).isEqualTo(SegmentReplicator.State.WAITING_FOR_EXCHANGE);
        assertThat(f.b.log(0).entries()).isEmpty();
        answer.tryEmitValue(ExchangeGate.Readiness.READY);
        f.advance(Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(10);
    }

    @Test
    void aRemoteWithoutTheExchangeIsReportedAndNeverWrittenTo() {
        Fixture f = new Fixture(ONE);
        f.exchangeGate = remote -> Flux.just(ExchangeGate.Readiness.UNSUPPORTED);
        f.produce(0, 10, 5, Compression.NONE);
        f.a.log(0).seal();
        SegmentReplicator r = f.replicator(0);
        StepVerifier.withVirtualTime(r::run, () -> f.clock, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(Duration.ofHours(1)) // neither done nor failed: waiting for a READY verdict
                .then(() -> assertThat(r.state()).isEqualTo(SegmentReplicator.State.UNSUPPORTED))
                .thenCancel()
                .verify();
        assertThat(f.b.log(0).entries()).isEmpty();
    }

    @Test
    void theExchangeVerdictIsReevaluatedUnsupportedThenReady() {
        Fixture f = new Fixture(ONE);
        Sinks.Many<ExchangeGate.Readiness> verdicts = Sinks.many().replay().latest();
        verdicts.tryEmitNext(ExchangeGate.Readiness.UNSUPPORTED);
        f.exchangeGate = remote -> verdicts.asFlux();
        f.produce(0, 40, 10, Compression.LZ4);
        f.a.log(0).seal();
        SegmentReplicator r = f.replicator(0);
        Disposable run = r.run().subscribe();
        f.advance(Duration.ofMinutes(5));
        assertThat(r.state()).isEqualTo(SegmentReplicator.State.UNSUPPORTED);
        assertThat(f.b.log(0).entries()).as("nothing written while unsupported").isEmpty();
        verdicts.tryEmitNext(ExchangeGate.Readiness.READY);
        f.advance(Duration.ofSeconds(1));
        assertThat(run.isDisposed()).as("completed").isTrue();
        assertThat(r.state()).isEqualTo(SegmentReplicator.State.DONE);
        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, 40).mapToObj(n -> "a/" + n).toList());
    }

    @Test
    void aRemoteThatStopsAnsweringIsNotWrittenToUntilItAnswersAgain() {
        Fixture f = new Fixture(ONE);
        Sinks.Many<ExchangeGate.Readiness> verdicts = Sinks.many().replay().latest();
        verdicts.tryEmitNext(ExchangeGate.Readiness.READY);
        f.exchangeGate = remote -> verdicts.asFlux();
        f.produce(0, 20, 10, Compression.NONE);
        SegmentReplicator r = f.replicator(0);
        r.run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).hasSize(20);
        verdicts.tryEmitNext(ExchangeGate.Readiness.UNSUPPORTED);
        f.produce(20, 20, 10, Compression.NONE);
        f.advance(Duration.ofMinutes(1));
        assertThat(r.state()).isEqualTo(SegmentReplicator.State.UNSUPPORTED);
        assertThat(f.deliveredToB()).as("nothing more while unsupported").hasSize(20);
        verdicts.tryEmitNext(ExchangeGate.Readiness.READY);
        f.advance(Duration.ofSeconds(1));
        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, 40).mapToObj(n -> "a/" + n).toList());
    }

    @Test
    void aFailingGateIsAskedAgainAndNeverFailsTheReplicator() {
        Fixture f = new Fixture(ONE);
        AtomicInteger asked = new AtomicInteger();
        f.exchangeGate = remote -> asked.incrementAndGet() < 3 ? Flux.error(new IllegalStateException("no controller"))
                : Flux.just(ExchangeGate.Readiness.READY);
        f.produce(0, 10, 5, Compression.NONE);
        f.a.log(0).seal();
        StepVerifier.withVirtualTime(() -> f.replicator(0).run(), () -> f.clock, Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(5))
                .verifyComplete();
        assertThat(asked.get()).isEqualTo(3);
        assertThat(f.deliveredToB()).hasSize(10);
    }

    /**
     * Pulsar #26113: the head of a pipelined window fails, later entries are persisted, and the re-sent
     * head is taken for a duplicate of them and acknowledged: lost. With the session discipline it
     * cannot happen; with Pulsar's V2 deduplication alone, the same run loses the head.
     */
    @Test
    void aFailedHeadOfTheWindowIsNeverLostToDeduplication() {
        assertThat(headFailureRun(true)).as("with session order").hasSize(50).doesNotHaveDuplicates();
        assertThat(headFailureRun(false)).as("Pulsar's V2 dedup alone loses the head").hasSize(49);
    }

    private static List<String> headFailureRun(boolean sessionOrder) {
        Fixture f = new Fixture(ONE);
        f.b.sessionOrder(sessionOrder);
        AtomicInteger sends = new AtomicInteger();
        f.b.faults((segment, producer, position) -> sends.getAndIncrement() == 0
                ? new SendFault.Rejected(Duration.ofMillis(50)) : new SendFault.Delay(Duration.ofMillis(50)));
        for (int i = 0; i < 50; i++) {
            f.produce(i, 1, 1, Compression.NONE); // 50 entries, one message each, one key
        }
        f.a.log(0).seal();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(10));
        return f.deliveredToB();
    }

    @Test
    void sendsArePipelinedUpToTheWindow() {
        assertThat(timeToReplicate(1000, 1000)).isLessThan(Duration.ofSeconds(1));
        assertThat(timeToReplicate(1000, 1)).isGreaterThanOrEqualTo(Duration.ofSeconds(100));
    }

    private static Duration timeToReplicate(int entries, int window) {
        Fixture f = new Fixture(ONE);
        f.config = f.config.withMaxInFlight(window);
        f.b.faults(SendFaults.roundTrip(Duration.ofMillis(100)));
        for (int i = 0; i < entries; i++) {
            f.produce(i, 1, 1, Compression.NONE);
        }
        f.a.log(0).seal();
        long start = f.clock.now(TimeUnit.MILLISECONDS);
        Disposable run = f.replicator(0).run().subscribe();
        while (!run.isDisposed()) {
            f.advance(Duration.ofMillis(100));
        }
        return Duration.ofMillis(f.clock.now(TimeUnit.MILLISECONDS) - start);
    }

    @Test
    void onlyFailedPartsAreSentAgain() {
        Layout four = SPLIT.apply(Mutation.split(1), 1, 0).layoutOrThrow().apply(Mutation.split(2), 2, 0)
                .layoutOrThrow();
        Fixture f = new Fixture(ONE, four);
        List<Long> segments = four.activeSegments().stream().map(Segment::id).toList();
        long failing = segments.get(2);
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>(); // by "<segment>/<position>"
        f.b.faults((segment, producer, position) -> {
            int attempt = attempts.computeIfAbsent(segment + "/" + position, p -> new AtomicInteger()).getAndIncrement();
            return segment == failing && attempt == 0 ? new SendFault.LostRequest() : SendFault.NONE;
        });
        f.produce(0, 64, 64, Compression.LZ4); // one entry per source bucket, each spread over 4 segments
        f.a.log(0).seal();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(5));
        assertThat(f.deliveredToB()).hasSize(64).doesNotHaveDuplicates();
        String first = SourcePosition.of(0, 0).toString();
        ToIntFunction<Long> triesAt = segment -> attempts.entrySet().stream()
                .filter(e -> e.getKey().startsWith(segment + "/" + first + ":")).mapToInt(e -> e.getValue().get())
                .max().orElseThrow();
        assertThat(triesAt.applyAsInt(failing)).isEqualTo(2);
        assertThat(triesAt.applyAsInt(segments.get(0))).as("the first segment's part went through the first time")
                .isEqualTo(1);
        assertThat(triesAt.applyAsInt(segments.get(1))).isEqualTo(1);
    }

    @Test
    void atMostOneSlowPathOperationPerReplicatorAndItsWorkRunsOnTheCpuScheduler() {
        Fixture f = new Fixture(ONE, SPLIT);
        AtomicInteger held = new AtomicInteger();
        AtomicInteger maxHeld = new AtomicInteger();
        f.budget = (id, bytes, codec) -> Mono.delay(Duration.ofMillis(5), f.clock).map(t -> {
            maxHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
            return held::decrementAndGet;
        });
        AtomicInteger cpuTasks = new AtomicInteger();
        f.cpu = new CountingScheduler(f.clock, cpuTasks);
        f.produce(0, 200, 100, Compression.SNAPPY);
        f.a.log(0).seal();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(10));
        assertThat(f.deliveredToB()).hasSize(200);
        assertThat(maxHeld.get()).isEqualTo(1);
        assertThat(held.get()).as("every permit released").isZero();
        assertThat(cpuTasks.get()).isEqualTo((int) f.metrics.rebatchedEntries());
    }

    @Test
    void survivesACrashWithOnlyTheDurableCursor() {
        Fixture f = new Fixture(ONE);
        f.b.faults(SendFaults.roundTrip(Duration.ofMillis(30)));
        f.produce(0, 300, 40, Compression.LZ4);
        Disposable first = f.replicator(0).run().subscribe();
        f.advance(Duration.ofMillis(45));
        first.dispose(); // crash with sends in flight
        f.produce(300, 100, 40, Compression.LZ4);
        f.a.log(0).seal();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(5));
        assertThat(f.deliveredToB()).hasSize(400).doesNotHaveDuplicates();
    }

    @Test
    void aDroppedConnectionLosesReceiptsButNoEntries() {
        Fixture f = new Fixture(ONE);
        f.b.faults(SendFaults.roundTrip(Duration.ofMillis(40)));
        f.produce(0, 400, 40, Compression.SNAPPY);
        f.a.log(0).seal();
        Disposable run = f.replicator(0).run().subscribe();
        for (int i = 0; i < 5; i++) {
            f.advance(Duration.ofMillis(25));
            f.b.disconnectAll();
        }
        f.advance(Duration.ofSeconds(5));
        assertThat(run.isDisposed()).isTrue();
        assertThat(f.deliveredToB()).hasSize(400).doesNotHaveDuplicates();
        assertThat(f.metrics.rewinds()).isPositive();
        assertThat(f.metrics.duplicateReceipts()).as("entries whose receipts were lost come back as duplicates")
                .isPositive();
    }

    @Test
    void sealedSegmentsPinnedByBacklogAreAGauge() {
        Fixture f = new Fixture(ONE);
        var registry = new SimpleMeterRegistry();
        f.a.pinnedSegmentsMetric(0).bindTo(registry);
        f.produce(0, 10, 5, Compression.NONE);
        f.a.apply(Mutation.split(0)).layoutOrThrow();
        assertThat(registry.get(PipelineMetricsBinder.SEALED_PINNED).gauge().value()).isEqualTo(1);
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(1));
        assertThat(registry.get(PipelineMetricsBinder.SEALED_PINNED).gauge().value()).isZero();
    }

    @Test
    void theFastPathKeepsItsPaceWhileTheSlowPathSaturatesTheBudget() {
        Duration alone = fastSegmentTime(false);
        Duration beside = fastSegmentTime(true);
        assertThat(beside).isEqualTo(alone);
    }

    /** How long segment 1 (fast path) takes, with or without segment 0 re-batching on a tiny budget. */
    private static Duration fastSegmentTime(boolean slowPathBusy) {
        Layout source = Layout.initial(2, 4, 0);
        Layout remote = source.apply(Mutation.split(0), 0, 0).layoutOrThrow(); // finer under segment 0 only
        Fixture f = new Fixture(source, remote);
        BrokerBudget budget = new BrokerBudget(
                BudgetConfig.of(200), f.clock);
        f.budget = budget;
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        new BudgetMetricsBinder(budget).bindTo(meters);
        f.b.faults(SendFaults.roundTrip(Duration.ofMillis(10)));
        for (int i = 0; i < 40; i++) {
            f.produce(i * 50, 50, 200, Compression.LZ4);
        }
        f.a.log(0).seal();
        f.a.log(1).seal();
        Disposable slow = slowPathBusy ? f.replicator(0).run().subscribe() : null;
        long start = f.clock.now(TimeUnit.MILLISECONDS);
        Disposable fast = f.replicator(1).run().subscribe();
        while (!fast.isDisposed()) {
            f.advance(Duration.ofMillis(10));
        }
        Duration took = Duration.ofMillis(f.clock.now(TimeUnit.MILLISECONDS) - start);
        if (slowPathBusy) {
            assertThat(slow.isDisposed()).as("the slow path is still throttled").isFalse();
            assertThat(meters.get(BudgetMetricsBinder.GRANTED).functionCounter().count()).isPositive();
            f.advance(Duration.ofMinutes(10));
            assertThat(slow.isDisposed()).as("and gets there").isTrue();
            assertThat(f.deliveredToB()).hasSize(2000).doesNotHaveDuplicates();
        }
        return took;
    }

    private static World singleOrigin(Fixture f) {
        World w = new World(ONE);
        w.clusters.put("a", f.a);
        w.clusters.put("b", f.b);
        return w.recordProduced("a", f.a);
    }
}
