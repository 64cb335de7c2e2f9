package io.verbatim.budget;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The bytes in flight across the replicators of one broker: what they have read and not yet had
 * acknowledged, which is what they hold on the heap. Each replicator pass takes a {@link Window} on it,
 * bounded on its own by the replicator's own limits (its {@code maxInFlightBytes} and {@code maxInFlight}).
 *
 * <p>A window that holds nothing is always granted its next entry, whatever its size and whatever the
 * broker holds: an entry larger than a window goes alone, and no replicator starves behind the others.
 * The broker can then hold up to its limit plus one entry per replicator (Pulsar's entries are at most
 * {@code maxMessageSize}, 5 MiB by default). Windows that wait for the broker are served first come,
 * first served.
 *
 * <p>One lock guards every window of a budget: a grant or a release is a few additions under it.
 */
public final class InFlightBudget {
    /**
     * What one entry is charged beyond its bytes: a floor of its bookkeeping on the heap (the parsed and
     * re-stamped entry, the unit, the send's operators and timer), so that a window of tiny entries is
     * bounded by what it really holds.
     */
    public static final long ENTRY_OVERHEAD_BYTES = 1024;

    private final long limit;
    private long used;
    /** Windows whose pending entry fits their own limits and waits for the broker's, oldest first. */
    private final ArrayDeque<Window> waiting = new ArrayDeque<>();

    private InFlightBudget(long limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("a broker's in-flight budget " + limit + " must be at least one byte");
        }
        this.limit = limit;
    }

    /** A budget of {@code bytes} shared by every replicator given it. */
    public static InFlightBudget of(long bytes) {
        return new InFlightBudget(bytes);
    }

    /** No broker-wide bound: each replicator is bounded by its own window only. */
    public static InFlightBudget unlimited() {
        return new InFlightBudget(Long.MAX_VALUE);
    }

    public long limit() {
        return limit;
    }

    /** Bytes granted and not yet released, over every window. */
    public synchronized long used() {
        return used;
    }

    /** A window for one pass of a replicator: at most {@code maxBytes} and {@code maxEntries} held at once. */
    public Window window(long maxBytes, int maxEntries) {
        return new Window(maxBytes, maxEntries);
    }

    /** What an entry of {@code bytes} is charged. */
    public static long charge(long bytes) {
        return bytes + ENTRY_OVERHEAD_BYTES;
    }

    /** Grants {@code w}'s pending entry if it may have it now; under the lock. The sink to complete, or null. */
    private @Nullable MonoSink<Void> tryGrant(Window w) {
        Window.Pending p = w.pending;
        if (p == null) {
            return null;
        }
        boolean alone = w.held == 0;
        if (!alone && (w.held + p.bytes > w.maxBytes || w.leases.size() >= w.maxEntries)) {
            return null; // its own acknowledgements will make room
        }
        boolean brokerRoom = used <= limit - p.bytes && (waiting.isEmpty() || waiting.peekFirst() == w);
        if (!alone && !brokerRoom) {
            if (!p.queued) {
                p.queued = true;
                waiting.addLast(w);
            }
            return null;
        }
        if (p.queued) {
            waiting.remove(w);
        }
        w.pending = null;
        w.held += p.bytes;
        w.leases.addLast(p.bytes);
        used += p.bytes;
        return p.sink;
    }

    /** After a release of {@code w}: what may now be granted, {@code w}'s own entry first; under the lock. */
    private List<MonoSink<Void>> grantsAfterRelease(Window w) {
        List<MonoSink<Void>> grants = new ArrayList<>(2);
        MonoSink<Void> own = tryGrant(w);
        if (own != null) {
            grants.add(own);
        }
        while (!waiting.isEmpty()) {
            MonoSink<Void> next = tryGrant(waiting.peekFirst());
            if (next == null) {
                break;
            }
            grants.add(next);
        }
        return grants;
    }

    /**
     * The bytes one replicator pass holds: taken in cursor order, one entry at a time (a pass asks for its
     * next entry only once the previous one was granted), given back oldest first as entries are
     * acknowledged, and all at once when the pass ends.
     */
    public final class Window {
        private final long maxBytes;
        private final int maxEntries;
        private final ArrayDeque<Long> leases = new ArrayDeque<>();
        private long held;
        private @Nullable Pending pending;
        private boolean closed;

        private Window(long maxBytes, int maxEntries) {
            if (maxBytes < 1 || maxEntries < 1) {
                throw new IllegalArgumentException("a window of " + maxBytes + " bytes and " + maxEntries
                        + " entries holds nothing");
            }
            this.maxBytes = maxBytes;
            this.maxEntries = maxEntries;
        }

        /**
         * Completes once an entry of {@code bytes} stored bytes may be read into the pass. At most one
         * acquisition is pending at a time; cancelling it gives up its place. After {@link #close()} it
         * never completes.
         */
        public Mono<Void> acquire(long bytes) {
            long charged = charge(bytes);
            return Mono.create(sink -> {
                MonoSink<Void> granted;
                synchronized (InFlightBudget.this) {
                    if (closed) {
                        return;
                    }
                    if (pending != null) {
                        throw new IllegalStateException("a window takes one entry at a time");
                    }
                    Pending p = new Pending(charged, sink);
                    pending = p;
                    granted = tryGrant(this);
                    if (granted == null) {
                        sink.onCancel(() -> cancel(p));
                    }
                }
                if (granted != null) {
                    granted.success();
                }
            });
        }

        /**
         * Takes an entry of {@code bytes} stored bytes now if {@link #acquire} would grant it at once, without
         * building a {@code Mono} (the fast path's common case); false if it must wait, or the window is closed.
         */
        public boolean tryAcquire(long bytes) {
            long charged = charge(bytes);
            synchronized (InFlightBudget.this) {
                if (closed || pending != null) {
                    return false;
                }
                boolean alone = held == 0;
                if (!alone && (held + charged > maxBytes || leases.size() >= maxEntries
                        || used > limit - charged || !waiting.isEmpty())) {
                    return false;
                }
                held += charged;
                leases.addLast(charged);
                used += charged;
                return true;
            }
        }

        private void cancel(Pending p) {
            List<MonoSink<Void>> grants;
            synchronized (InFlightBudget.this) {
                if (pending != p) {
                    return;
                }
                pending = null;
                if (!p.queued) {
                    return;
                }
                waiting.remove(this);
                grants = grantsAfterRelease(this); // the one behind it may fit now
            }
            grants.forEach(MonoSink::success);
        }

        /** The oldest entry held was acknowledged: gives its bytes back. */
        public void releaseOldest() {
            List<MonoSink<Void>> grants;
            synchronized (InFlightBudget.this) {
                Long bytes = leases.pollFirst();
                if (bytes == null) {
                    return; // released by close() already
                }
                held -= bytes;
                used -= bytes;
                grants = grantsAfterRelease(this);
            }
            grants.forEach(MonoSink::success);
        }

        /** The pass ended: everything held is given back, a pending acquisition is dropped. Idempotent. */
        public void close() {
            List<MonoSink<Void>> grants;
            synchronized (InFlightBudget.this) {
                closed = true;
                Pending p = pending;
                pending = null;
                if (p != null && p.queued) {
                    waiting.remove(this);
                }
                used -= held;
                held = 0;
                leases.clear();
                grants = grantsAfterRelease(this);
            }
            grants.forEach(MonoSink::success);
        }

        /** Bytes this window holds (charged, overhead included). */
        public long held() {
            synchronized (InFlightBudget.this) {
                return held;
            }
        }

        /** Entries this window holds. */
        public int entries() {
            synchronized (InFlightBudget.this) {
                return leases.size();
            }
        }

        private static final class Pending {
            final long bytes;
            final MonoSink<Void> sink;
            boolean queued;

            Pending(long bytes, MonoSink<Void> sink) {
                this.bytes = bytes;
                this.sink = sink;
            }
        }
    }
}
