package io.verbatim.runtime.broker;

import io.verbatim.runtime.broker.Subscription.Delivery;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * One consumer's receiver queue (Pulsar's {@code receiverQueueSize}): deliveries dispatched to the consumer
 * and not yet read, at most {@code capacity} of them. A dispatcher that finds it full leaves a wake-up and
 * stops; the wake-ups run as the reader's requests make room. One reader at a time: a reader that cancels
 * leaves what it did not take for the next one. A reader either receives (each delivery it takes is told to
 * the subscription as received, which acknowledges it) or leaves acknowledging to its caller.
 */
final class ReceiverQueue {
    private final String owner;
    private final int capacity;
    private final ArrayDeque<Delivery> queue = new ArrayDeque<>();
    private final List<Runnable> waiting = new ArrayList<>();
    private final AtomicInteger wip = new AtomicInteger();
    private final Consumer<Delivery> received;
    private @Nullable FluxSink<Delivery> reader;
    /** Whether what the reader takes counts as received ({@link #received}) as it takes it. */
    private boolean readerReceives;
    private boolean closed;

    /**
     * @param owner who the queue belongs to, for messages ({@code consumer 2 of subscription 'billing'})
     * @param received told of each delivery a receiving reader took, after it took it
     */
    ReceiverQueue(String owner, int capacity, Consumer<Delivery> received) {
        this.owner = owner;
        this.capacity = capacity;
        this.received = received;
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
     * What the consumer receives, in dispatch order, as it requests; one reader at a time.
     *
     * @param receives whether each delivery counts as received once the reader took it; if not, its caller tells
     *        the subscription
     */
    Flux<Delivery> flux(boolean receives) {
        return Flux.create(sink -> {
            synchronized (this) {
                if (reader != null) {
                    sink.error(new IllegalStateException(owner + " already has a reader (one at a time)"));
                    return;
                }
                reader = sink;
                readerReceives = receives;
            }
            sink.onDispose(() -> detach(sink));
            sink.onRequest(n -> drain());
            drain();
        });
    }

    private synchronized void detach(FluxSink<Delivery> sink) {
        if (reader == sink) {
            reader = null;
        }
    }

    /** Puts {@code deliveries} back at the head of the queue, in their order: given out, never received. */
    void requeue(List<Delivery> deliveries) {
        synchronized (this) {
            if (closed) {
                return;
            }
            for (int i = deliveries.size() - 1; i >= 0; i--) {
                queue.addFirst(deliveries.get(i));
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
                boolean receives;
                synchronized (this) {
                    sink = reader;
                    if (sink == null || sink.isCancelled() || sink.requestedFromDownstream() <= 0 || queue.isEmpty()) {
                        break;
                    }
                    d = queue.poll();
                    receives = readerReceives;
                    wake.addAll(waiting); // room made: every dispatcher waiting for it tries again
                    waiting.clear();
                }
                sink.next(d);
                if (receives) {
                    received.accept(d);
                }
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
