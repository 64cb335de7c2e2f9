package io.verbatim.pulsar;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.StoredEntry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.impl.VerbatimRawConsumer;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * A replication cursor as a durable Pulsar subscription on the segment's topic, read as raw stored
 * entries ({@link VerbatimRawConsumer}) and acknowledged cumulatively.
 *
 * <p>Each {@link #read()} opens its own exclusive consumer and closes it when cancelled, so a read always
 * starts right after the subscription's mark-delete position, which is where the broker starts it. A
 * reconnect makes the broker send again what was not acknowledged; the read drops what it already
 * emitted, so its entries never repeat. At most {@link PulsarStorage.Settings#receiverQueue()} messages
 * are held ahead of demand, and only while they are held: permits go back as entries go downstream.
 *
 * <p>Acknowledgements coalesce: one is with the broker at a time, and the ones asked meanwhile go
 * as one, the highest. Each completes once the broker's receipt covers it. With no read open (between
 * two runs of a replicator), an acknowledgement opens a consumer that takes no entries, for the time of
 * the acknowledgement.
 */
final class PulsarCursor implements ReplicationCursor {
    private static final Logger LOG = LoggerFactory.getLogger(PulsarCursor.class);
    private final PulsarStorage storage;
    private final String topic;
    private final String subscription;
    /** Guards everything below. */
    private final Object lock = new Object();
    /** The consumer of the open read, once subscribed. */
    private @Nullable VerbatimRawConsumer reading;
    /** The open read, subscribed or subscribing: an acknowledgement waits for its consumer. */
    private @Nullable Read open;
    /** Done when the last consumer of this cursor is closed: the next one subscribes after it. */
    private CompletableFuture<Void> lastClose = CompletableFuture.completedFuture(null);
    /** What the broker confirmed, and the highest acknowledgement asked for. */
    private @Nullable SourcePosition confirmed;
    private @Nullable SourcePosition wanted;
    private boolean acking;
    /**
     * Counts acknowledgements given up on: one sent just before its consumer was closed by the broker (a topic
     * unload) is never answered, and waiting for its receipt would hold every later one for the operation
     * timeout; it is sent again over the new connection and its late answer, if any, ignored.
     */
    private long ackEpoch;
    private final List<Waiter> waiters = new ArrayList<>();
    /** A read that ended and keeps its consumer until what it emitted is acknowledged ({@code Read#close}). */
    private @Nullable Read lingering;
    /** When acknowledgements started failing in a row ({@link System#nanoTime}), 0 while they succeed. */
    private long failingSince;
    private static final Duration ACK_RETRY = Duration.ofMillis(100);
    /** How long a read waits for the last read's consumer to close before it subscribes. */
    private static final Duration READ_AFTER_CLOSE_WAIT = Duration.ofSeconds(5);
    /** How long an acknowledgement without a read waits for the last read's consumer to close. */
    private static final Duration ACK_AFTER_CLOSE_WAIT = Duration.ofSeconds(2);
    /** How soon the broker is asked again whether a sealed topic ended for a read. */
    private static final Duration END_RETRY = Duration.ofSeconds(1);

    /** Whether the segment was sealed when this cursor was made (the topic terminated in an earlier run, say). */
    private final boolean sealedAtOpen;

    PulsarCursor(PulsarStorage storage, String topic, String subscription, boolean sealedAtOpen) {
        this.storage = storage;
        this.topic = topic;
        this.subscription = subscription;
        this.sealedAtOpen = sealedAtOpen;
    }

    String topic() {
        return topic;
    }

    String subscription() {
        return subscription;
    }

    /** For tests: the consumer of the open read, once subscribed. */
    @Nullable VerbatimRawConsumer readingConsumer() {
        synchronized (lock) {
            return reading;
        }
    }

    @Override
    public Flux<StoredEntry> read() {
        return Flux.create(sink -> new Read(sink).open());
    }

    @Override
    public Mono<Void> acknowledge(SourcePosition upTo) {
        if (!upTo.isWhole()) {
            return Mono.error(new IllegalArgumentException("a cursor on " + topic + " acknowledges whole entries, not "
                    + upTo));
        }
        return Mono.create(sink -> {
            boolean done;
            synchronized (lock) {
                done = confirmed != null && upTo.compareTo(confirmed) <= 0;
                if (!done) {
                    if (wanted == null || upTo.compareTo(wanted) > 0) {
                        wanted = upTo;
                    }
                    waiters.add(new Waiter(upTo, sink));
                }
            }
            if (done) {
                sink.success(); // outside the lock: what runs downstream may call into Pulsar
                return;
            }
            kick();
        });
    }

    /**
     * Sends an individual acknowledgement over the open read's consumer (the broker keeps it with the subscription,
     * as Pulsar keeps every consumer's); nothing without one, nothing waited for.
     */
    @Override
    public void acknowledgeOne(SourcePosition position) {
        if (!position.isWhole()) {
            return;
        }
        VerbatimRawConsumer consumer;
        synchronized (lock) {
            consumer = reading;
        }
        if (consumer != null) {
            consumer.acknowledgeOne(position.ledgerId(), position.entryId()).exceptionally(e -> {
                LOG.debug("{} as {}: the acknowledgement of {} alone did not reach the broker: {}", topic, subscription,
                        position, e.toString());
                return null;
            });
        }
    }

    /** The broker's count of entries after the subscription's mark-delete position (asks the broker: blocks). */
    @Override
    public long backlog() {
        return storage.backlog(topic, subscription);
    }

    /** Sends the highest acknowledgement asked for, unless one is with the broker already. */
    private void kick() {
        SourcePosition target;
        @Nullable VerbatimRawConsumer consumer;
        long epoch;
        synchronized (lock) {
            if (acking || wanted == null || (confirmed != null && wanted.compareTo(confirmed) <= 0)) {
                return;
            }
            consumer = reading;
            if (consumer == null && open != null) {
                return; // the read subscribing now sends it once it has its consumer
            }
            acking = true;
            target = wanted;
            epoch = ackEpoch;
        }
        CompletableFuture<Void> ack;
        if (consumer != null) {
            ack = consumer.acknowledgeUpTo(target.ledgerId(), target.entryId());
        } else {
            ack = acknowledgeWithoutReading(target);
        }
        ack.orTimeout(storage.settings().operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((v, error) -> acknowledged(target, error, epoch));
    }

    /** A consumer that takes no entries (no permits), only to acknowledge while no read is open. */
    private CompletableFuture<Void> acknowledgeWithoutReading(SourcePosition target) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletableFuture<Void> previous;
        synchronized (lock) {
            previous = lastClose;
            lastClose = done;
        }
        // reconnected under the acknowledgement (an unload): its receipt never comes, so it counts as failed and
        // goes again at once, not after the operation timeout
        CompletableFuture<Void> lost = new CompletableFuture<>();
        VerbatimRawConsumer.Receiver receiver = new VerbatimRawConsumer.Receiver() {
            @Override
            public void entry(VerbatimRawConsumer from, long ledgerId, long entryId, byte[] bytes, int messages,
                    Object connection) {
            }

            @Override
            public void endOfTopic() {
            }

            /** Called at every subscribe, the first one too. */
            private final AtomicInteger connects = new AtomicInteger();

            @Override
            public void reconnected() {
                if (connects.incrementAndGet() == 1) {
                    return;
                }
                lost.completeExceptionally(new IllegalStateException("the consumer acknowledging on " + topic
                        + " as " + subscription + " reconnected before the broker answered"));
            }
        };
        // Not the whole close: a read's consumer closed as its sealed topic is unloaded may not hear back for the
        // operation timeout, and the acknowledgements of the segment's last entries (what its children's replication
        // waits for) would wait as long (a direction 30 s behind after a split). The broker drops the consumer
        // anyway; should it still hold the subscription, the subscribe fails and the acknowledgement goes again.
        return previous.exceptionally(e -> null)
                .completeOnTimeout(null, ACK_AFTER_CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .thenCompose(v -> VerbatimRawConsumer.subscribe(storage.client(), topic, subscription,
                        SubscriptionInitialPosition.Latest, 0, receiver))
                .thenCompose(c -> c.acknowledgeUpTo(target.ledgerId(), target.entryId()).applyToEither(lost, x -> x)
                        .whenComplete((r, e) -> c.closeAsync().whenComplete((x, y) -> done.complete(null))))
                .whenComplete((r, e) -> {
                    if (e != null) {
                        done.complete(null);
                    }
                });
    }

    private void acknowledged(SourcePosition target, @Nullable Throwable error, long epoch) {
        List<Waiter> settled = new ArrayList<>();
        Read settledLingering = null;
        synchronized (lock) {
            if (epoch != ackEpoch) {
                return; // given up on at a reconnect and sent again: the one sent since settles the waiters
            }
            acking = false;
            long now = System.nanoTime();
            if (error == null) {
                failingSince = 0;
            } else if (failingSince == 0 || now - failingSince < storage.settings().operationTimeout().toNanos()) {
                // a consumer reconnecting (a topic unload, a broker restart) cannot acknowledge for a moment:
                // the acknowledgement goes again, until the operation timeout, before anyone is told it failed
                if (failingSince == 0) {
                    failingSince = now;
                }
                CompletableFuture.delayedExecutor(ACK_RETRY.toMillis(), TimeUnit.MILLISECONDS).execute(this::kick);
                return;
            }
            if (error == null && (confirmed == null || target.compareTo(confirmed) > 0)) {
                confirmed = target;
            }
            if (lingering != null && confirmedUpTo(lingering.lastEmitted)) {
                settledLingering = lingering;
                lingering = null;
            }
            for (var it = waiters.iterator(); it.hasNext(); ) {
                Waiter w = it.next();
                if (error != null || w.upTo.compareTo(target) <= 0) {
                    settled.add(w);
                    it.remove();
                }
            }
            if (error != null) {
                wanted = confirmed;
                failingSince = 0;
            }
        }
        if (settledLingering != null) {
            settledLingering.closeNow(); // everything it emitted is acknowledged
        }
        for (Waiter w : settled) {
            if (error == null) {
                w.sink.success();
            } else {
                w.sink.error(new PulsarStorageException("cannot acknowledge " + w.upTo + " on " + subscription
                        + " of " + topic, PulsarStorage.cause(error)));
            }
        }
        kick();
    }

    private record Waiter(SourcePosition upTo, MonoSink<Void> sink) {
    }

    /** Whether the broker confirmed every entry up to {@code position} (nothing to confirm when null). */
    private boolean confirmedUpTo(@Nullable SourcePosition position) {
        synchronized (lock) {
            return position == null || (confirmed != null && confirmed.compareTo(position) >= 0);
        }
    }

    /** Closes {@code read}'s consumer if it still lingers (a new read opens, or it waited long enough). */
    private void closeLingering(Read read) {
        synchronized (lock) {
            if (lingering != read) {
                return;
            }
            lingering = null;
        }
        read.closeNow();
    }

    /** One entry the broker sent, held until demand takes it. */
    private record Held(SourcePosition position, byte[] bytes, int messages, VerbatimRawConsumer from,
            Object connection) {
    }

    /** One subscription of {@link #read()}: its consumer, what it holds, and its drain loop. */
    private final class Read implements VerbatimRawConsumer.Receiver {
        private final FluxSink<StoredEntry> sink;
        private final Queue<Held> held = new ConcurrentLinkedQueue<>();
        private final AtomicInteger wip = new AtomicInteger();
        private final CompletableFuture<Void> closed = new CompletableFuture<>();
        private volatile @Nullable VerbatimRawConsumer consumer;
        /** The last position received: a redelivery at or before it is dropped. Read and written by I/O threads. */
        private volatile @Nullable SourcePosition lastReceived;
        /** The last position emitted downstream (by the drain loop). */
        private volatile @Nullable SourcePosition lastEmitted;
        private volatile boolean ended;
        /** Whether it completed (emitted the sealed topic's last entry), as opposed to being cancelled. */
        private volatile boolean completed;
        /** Whether the broker is being asked whether the topic ended ({@link #confirmEnd}): one asking at a time. */
        private final AtomicBoolean confirming = new AtomicBoolean();
        /** Stops telling this read of a seal; run when it closes. */
        private volatile Runnable unwatchSeal = () -> { };
        private volatile boolean cancelled;
        private boolean done;

        Read(FluxSink<StoredEntry> sink) {
            this.sink = sink;
        }

        void open() {
            Read before;
            synchronized (lock) {
                before = lingering;
            }
            if (before != null) {
                closeLingering(before); // its closing is the previous close this read waits for
            }
            CompletableFuture<Void> previous;
            synchronized (lock) {
                previous = lastClose;
                lastClose = closed;
                open = this;
            }
            sink.onRequest(n -> drain());
            sink.onDispose(this::close);
            long start = System.nanoTime();
            // at most a few seconds: a consumer closed as its topic is unloaded may not hear back for the operation
            // timeout; should it still hold the exclusive subscription, this subscribe fails and the read goes again
            previous.exceptionally(e -> null)
                    .completeOnTimeout(null, READ_AFTER_CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)
                    .whenComplete((v, e) -> LOG.debug("{} as {}: the last read closed after {} ms; subscribing", topic,
                            subscription, (System.nanoTime() - start) / 1_000_000))
                    .thenCompose(v -> VerbatimRawConsumer.subscribe(storage.client(), topic, subscription,
                            SubscriptionInitialPosition.Earliest, storage.settings().receiverQueue(), this))
                    // bounded by the client's operation timeout; no deadline of ours, which would leave a consumer
                    // that subscribes after it connected, holding the exclusive subscription
                    .whenComplete((c, error) -> {
                        if (error != null) {
                            synchronized (lock) {
                                if (open == this) {
                                    open = null;
                                }
                            }
                            closed.complete(null);
                            kick(); // what waited for this read's consumer goes on its own
                            if (cancelled) { // nobody to tell: an error now would be dropped, and logged as ERROR
                                LOG.debug("{} as {}: the read was cancelled before its subscribe failed: {}", topic,
                                        subscription, PulsarStorage.cause(error).toString());
                                return;
                            }
                            sink.error(new PulsarStorageException("cannot read " + topic + " as " + subscription,
                                    PulsarStorage.cause(error)));
                            return;
                        }
                        LOG.debug("{} as {}: reading, subscribed after {} ms{}", topic, subscription,
                                (System.nanoTime() - start) / 1_000_000, cancelled ? " (cancelled meanwhile)" : "");
                        consumer = c;
                        synchronized (lock) {
                            if (!cancelled) {
                                reading = c;
                            }
                        }
                        if (cancelled) {
                            closeConsumer(c);
                        } else {
                            kick(); // an acknowledgement that waited for a consumer
                            drain();
                            unwatchSeal = storage.watchSeal(topic, Read.this::confirmEnd);
                            if (cancelled) {
                                unwatchSeal.run();
                            } else if (sealedAtOpen || storage.sealedHere(topic)) {
                                confirmEnd();
                            }
                        }
                    });
        }

        @Override
        public void entry(VerbatimRawConsumer from, long ledgerId, long entryId, byte[] bytes, int messages,
                Object connection) {
            SourcePosition position = SourcePosition.of(ledgerId, entryId);
            SourcePosition last = lastReceived;
            SourcePosition emitted = lastEmitted; // also: an entry emitted while a reconnect reset lastReceived
            if ((last != null && position.compareTo(last) <= 0)
                    || (emitted != null && position.compareTo(emitted) <= 0)) {
                from.release(messages, connection); // sent again after a reconnect: emitted already
                return;
            }
            lastReceived = position;
            held.add(new Held(position, bytes, messages, from, connection));
            drain();
        }

        /**
         * The broker says a terminated topic ended only when it reads at the end while the subscription has nothing
         * unacknowledged: a replicator acknowledges behind its sends, so the broker often never says it. And a
         * write still at the bookies as the topic was terminated may be stored after it said it (Pulsar 4.0), so a
         * read that ended there would leave that entry unread for good (a sealed segment that never drains, its
         * children's replication waiting on it). So the broker's word, this process's seal, or a segment sealed
         * before the read opened only start {@link #confirmEnd}: the end counts once the termination is over and
         * the broker's final state agrees.
         */
        @Override
        public void endOfTopic() {
            LOG.debug("{} as {}: the broker says the topic ended", topic, subscription);
            confirmEnd();
        }

        /** Asks the broker whether the topic ended for this read, and again every second until it did. */
        private void confirmEnd() {
            if (confirming.compareAndSet(false, true)) {
                askEnd();
            }
        }

        private void askEnd() {
            storage.terminated(topic)
                    .thenCompose(v -> storage.admin().topics().getInternalStatsAsync(topic))
                    .whenComplete((stats, error) -> {
                        if (cancelled || done) {
                            return;
                        }
                        if (error == null && !"Terminated".equals(stats.state)
                                && !sealedAtOpen && !storage.sealedHere(topic)) {
                            confirming.set(false); // not sealed (yet): a seal or the broker's word asks again
                            return;
                        }
                        LOG.debug("{} as {}: asked whether it ended: {}", topic, subscription, error != null ? error
                                : stats.state + ", last entry " + stats.lastConfirmedEntry + ", emitted " + lastEmitted);
                        // sealed, though the broker may say so only once the seal's unload is over (a topic being
                        // unloaded reports its managed ledger closed): the end counts on the broker's word
                        if (error == null && "Terminated".equals(stats.state) && atEnd(stats)) {
                            ended = true;
                            drain();
                            return;
                        }
                        // the last entry is on its way or held, or the broker could not be asked: asked again, as
                        // the broker need not say the end again
                        CompletableFuture.delayedExecutor(END_RETRY.toMillis(), TimeUnit.MILLISECONDS)
                                .execute(this::askEnd);
                    });
        }

        /**
         * Whether this read has nothing left in the terminated topic: its subscription is at the last entry, or it
         * emitted the last entry. Emitted, not received: a reconnect drops what is held, and it comes again.
         */
        private boolean atEnd(PersistentTopicInternalStats stats) {
            var cursor = stats.cursors == null ? null : stats.cursors.get(subscription);
            if (cursor != null && Objects.equals(cursor.markDeletePosition, stats.lastConfirmedEntry)) {
                return true;
            }
            SourcePosition emitted = lastEmitted;
            if (emitted == null || stats.lastConfirmedEntry == null) {
                return false;
            }
            try {
                return emitted.compareTo(SourcePosition.parse(stats.lastConfirmedEntry)) >= 0;
            } catch (IllegalArgumentException e) {
                return false; // not a position: only the subscription's own state says the end
            }
        }

        @Override
        public void failed(Throwable error) {
            if (!cancelled) {
                close(); // its consumer is closed already: what reads again opens a new one
                sink.error(new PulsarStorageException("the broker refused the consumer of " + topic + " as "
                        + subscription + " for good", PulsarStorage.cause(error)));
            }
        }

        /**
         * Over a new connection the broker sends again from the mark-delete position: what is held from the
         * old one is dropped (it comes again, with permits of the new connection), and only what went
         * downstream counts as received.
         */
        @Override
        public void reconnected() {
            LOG.debug("{} as {}: (re)connected; emitted so far up to {}", topic, subscription, lastEmitted);
            held.clear();
            lastReceived = lastEmitted;
            boolean resend;
            synchronized (lock) {
                resend = acking && reading != null && reading == consumer;
                if (resend) {
                    ackEpoch++; // the acknowledgement in flight went over the old connection: never answered
                    acking = false;
                }
            }
            if (resend) {
                // not from here: this is Pulsar's I/O thread, inside the consumer's reconnection
                CompletableFuture.delayedExecutor(ACK_RETRY.toMillis(), TimeUnit.MILLISECONDS)
                        .execute(PulsarCursor.this::kick);
            }
        }

        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                while (!done && !cancelled && sink.requestedFromDownstream() > 0) {
                    Held h = held.poll();
                    if (h == null) {
                        break;
                    }
                    lastEmitted = h.position();
                    sink.next(new StoredEntry(h.position(), ByteBuffer.wrap(h.bytes())));
                    h.from().release(h.messages(), h.connection());
                }
                if (!done && !cancelled && ended && held.isEmpty()) {
                    done = true;
                    completed = true;
                    sink.complete();
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        /**
         * On the read's end or its cancel. A read that ended (its sealed topic read to the last entry) keeps its
         * consumer while the acknowledgements of what it emitted are still to come: the seal's unload is under way,
         * and a consumer closed now may not hear back for the operation timeout, holding the exclusive subscription
         * all that time; the acknowledgements that the segment's children's replication waits for would wait as long
         * (a direction 30 s behind after a split). It closes once they are confirmed, or after the operation timeout.
         */
        private void close() {
            if (completed && !confirmedUpTo(lastEmitted)) {
                synchronized (lock) {
                    if (open == this) {
                        open = null; // a new read may open: it closes this one first
                    }
                    lingering = this;
                }
                unwatchSeal.run();
                CompletableFuture.delayedExecutor(storage.settings().operationTimeout().toMillis(),
                        TimeUnit.MILLISECONDS).execute(() -> closeLingering(this));
                kick();
                return;
            }
            closeNow();
        }

        private void closeNow() {
            cancelled = true;
            unwatchSeal.run();
            VerbatimRawConsumer c;
            synchronized (lock) {
                c = consumer;
                if (reading == c) {
                    reading = null;
                }
                if (open == this) {
                    open = null;
                }
            }
            held.clear();
            if (c != null) {
                closeConsumer(c);
            }
            kick(); // an acknowledgement after the read goes without it
        }

        private void closeConsumer(VerbatimRawConsumer c) {
            c.closeAsync().orTimeout(storage.settings().operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                    .whenComplete((v, e) -> closed.complete(null));
        }
    }
}
