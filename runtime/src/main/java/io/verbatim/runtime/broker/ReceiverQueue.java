package io.verbatim.runtime.broker;

import io.verbatim.runtime.broker.Subscription.Delivery;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * One consumer's receiver queue (Pulsar's {@code receiverQueueSize}): deliveries dispatched to the consumer
 * and not yet read, at most {@code capacity} of them. A dispatcher that finds it full leaves a wake-up and
 * stops; the wake-ups run as the reader's requests make room. One reader at a time: a reader that cancels
 * leaves what it did not take for the next one, and a delivery handed to a reader that cancelled meanwhile
 * (never passed on) goes back to the head of the queue.
 */
final class ReceiverQueue {
    private final String owner;
    private final int capacity;
    private final ArrayDeque<Delivery> queue = new ArrayDeque<>();
    private final List<Runnable> waiting = new ArrayList<>();
    private final AtomicInteger wip = new AtomicInteger();
    private final Predicate<Delivery> wanted;
    private @Nullable FluxSink<Delivery> reader;
    private boolean closed;

    /**
     * @param owner who the queue belongs to, for messages ({@code consumer 2 of subscription 'billing'})
     * @param wanted whether a delivery put back ({@link #requeue}) is still to be delivered from here (its
     *        segment not given up meanwhile)
     */
    ReceiverQueue(String owner, int capacity, Predicate<Delivery> wanted) {
        this.owner = owner;
        this.capacity = capacity;
        this.wanted = wanted;
    }

    /**
     * Takes {@code d} if the queue has room; otherwise keeps {@code onRoom}, run once (on the reader's thread)
     * when the reader next makes room, and refuses. The caller hands the delivery to the reader with
     * {@link #drain} once it has released its own locks.
     */
    synchronized boolean offer(Delivery d, Runnable onRoom) {
        if (closed) {
            return false;
        }
        if (queue.size() >= capacity) {
            waiting.add(onRoom);
            return false;
        }
        queue.add(d);
        return true;
    }

    synchronized int depth() {
        return queue.size();
    }

    /**
     * What the consumer receives, in dispatch order, as it requests; one reader at a time. A delivery reaches the
     * reader or comes back to the queue: one the reader's cancel discarded on its way is put back.
     */
    Flux<Delivery> flux() {
        return Flux.<Delivery>create(sink -> {
            synchronized (this) {
                if (reader != null) {
                    sink.error(new IllegalStateException(owner + " already has a reader (one at a time)"));
                    return;
                }
                reader = sink;
            }
            sink.onDispose(() -> detach(sink));
            sink.onRequest(n -> drain());
            drain();
        }, FluxSink.OverflowStrategy.IGNORE) // no buffer: the drain hands over only what was requested
                .doOnDiscard(Delivery.class, d -> requeue(List.of(d)));
    }

    private synchronized void detach(FluxSink<Delivery> sink) {
        if (reader == sink) {
            reader = null;
        }
    }

    /**
     * Puts {@code deliveries} back at the head of the queue, in their order: given out, never received. Those no
     * longer {@code wanted} are left out.
     */
    void requeue(List<Delivery> deliveries) {
        List<Delivery> back = deliveries.stream().filter(wanted).toList();
        synchronized (this) {
            if (closed || back.isEmpty()) {
                return;
            }
            for (int i = back.size() - 1; i >= 0; i--) {
                queue.addFirst(back.get(i));
            }
        }
        drain();
    }

    /**
     * Drops what waits of segment {@code segmentId} (given up by this process: its next owner delivers it) and
     * wakes every dispatcher waiting for room.
     */
    void purge(long segmentId) {
        List<Runnable> wake;
        synchronized (this) {
            if (!queue.removeIf(d -> d.segmentId() == segmentId)) {
                return;
            }
            wake = new ArrayList<>(waiting);
            waiting.clear();
        }
        wake.forEach(Runnable::run);
    }

    /** Completes the reader once it has taken what is queued; refuses every later offer. */
    void close() {
        synchronized (this) {
            closed = true;
            waiting.clear();
        }
        drain();
    }

    /** Hands queued deliveries to the reader as far as it requested; one drain loop at a time, outside the lock. */
    void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            List<Runnable> wake = new ArrayList<>();
            FluxSink<Delivery> sink;
            while (true) {
                Delivery d;
                synchronized (this) {
                    sink = reader;
                    if (sink == null || sink.isCancelled() || sink.requestedFromDownstream() <= 0 || queue.isEmpty()) {
                        break;
                    }
                    d = queue.poll();
                    wake.addAll(waiting); // room made: every dispatcher waiting for it tries again
                    waiting.clear();
                }
                sink.next(d); // a reader that cancelled meanwhile discards it: put back (flux())
            }
            boolean complete;
            synchronized (this) {
                complete = closed && queue.isEmpty() && sink != null;
            }
            if (complete && sink != null) {
                sink.complete();
            }
            wake.forEach(Runnable::run);
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }
}
