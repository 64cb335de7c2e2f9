package io.verbatim.runtime.broker;

import io.verbatim.runtime.broker.Subscription.Delivery;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * One consumer's receiver queue (Pulsar's {@code receiverQueueSize}): deliveries dispatched to the consumer
 * and not yet read, at most {@code capacity} of them. A dispatcher that finds it full leaves a wake-up and
 * stops; the wake-ups run as the reader's requests make room. One reader at a time: a reader that cancels
 * leaves what it did not take for the next one.
 */
final class ReceiverQueue {
    private final String owner;
    private final int capacity;
    private final ArrayDeque<Delivery> queue = new ArrayDeque<>();
    private final List<Runnable> waiting = new ArrayList<>();
    private final AtomicInteger wip = new AtomicInteger();
    private @Nullable FluxSink<Delivery> reader;
    private boolean closed;

    /** @param owner who the queue belongs to, for messages ({@code consumer 2 of subscription 'billing'}) */
    ReceiverQueue(String owner, int capacity) {
        this.owner = owner;
        this.capacity = capacity;
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

    /** What the consumer receives, in dispatch order, as it requests; one reader at a time. */
    Flux<Delivery> flux() {
        return Flux.create(sink -> {
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
        });
    }

    private synchronized void detach(FluxSink<Delivery> sink) {
        if (reader == sink) {
            reader = null;
        }
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
                sink.next(d);
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
