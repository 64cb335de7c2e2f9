package io.verbatim.metadatalog.transport;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * The one outbound connection to a peer and its bounded queue. Connected lazily, on the first message;
 * a failed attempt (no connection, or no {@code WELCOME}) waits out a capped, jittered backoff on the
 * transport's scheduler, during which messages are dropped ({@code not_connected}) and the queue is
 * emptied: Raft resends what matters, and a queue of stale heartbeats would only delay fresh ones. A lost
 * connection that had been welcomed is redialled at once when messages wait.
 *
 * <p>{@link #offer} runs on any thread and never waits; the queue is drained on the connection's event
 * loop while the channel is writable, then again when it becomes writable.
 */
final class PeerLink {
    enum State { IDLE, CONNECTING, CONNECTED, BACKOFF, CLOSED }

    private final String peer;
    private final NettyRaftTransport transport;
    private final ConcurrentLinkedQueue<byte[]> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private volatile State state = State.IDLE;
    private volatile @Nullable Channel channel;
    // guarded by this
    private InetSocketAddress address;
    private @Nullable OutboundHandler attempt;
    private @Nullable Disposable dialing;
    private @Nullable Disposable timer;
    private long failures;
    private boolean dialled;

    PeerLink(String peer, InetSocketAddress address, NettyRaftTransport transport) {
        this.peer = peer;
        this.address = address;
        this.transport = transport;
    }

    String peer() {
        return peer;
    }

    synchronized InetSocketAddress address() {
        return address;
    }

    State state() {
        return state;
    }

    /** Queues a whole frame, or drops it and counts why. */
    void offer(byte[] frame) {
        RaftTransportMetrics metrics = transport.metrics();
        State s = state;
        if (s == State.CLOSED) {
            metrics.drop(Drop.UNKNOWN_MEMBER);
            return;
        }
        if (s == State.BACKOFF) {
            metrics.drop(Drop.NOT_CONNECTED);
            return;
        }
        if (queued.incrementAndGet() > transport.settings().maxQueuedMessages()
                | queuedBytes.addAndGet(frame.length) > transport.settings().maxQueuedBytes()) {
            queued.decrementAndGet();
            queuedBytes.addAndGet(-frame.length);
            metrics.drop(Drop.QUEUE_FULL);
            return;
        }
        queue.add(frame);
        s = state; // read again after the add: a WELCOME between the two drains what was added
        if (s == State.CONNECTED) {
            scheduleDrain();
        } else if (s == State.IDLE) {
            dial();
        }
    }

    void scheduleDrain() {
        Channel ch = channel;
        if (ch != null && drainScheduled.compareAndSet(false, true)) {
            ch.eventLoop().execute(() -> drain(ch));
        }
    }

    /** On {@code ch}'s event loop: writes queued frames while it is writable, then flushes once. */
    private void drain(Channel ch) {
        drainScheduled.set(false);
        if (ch != channel || !ch.isActive()) {
            return;
        }
        boolean wrote = false;
        byte[] frame;
        while (ch.isWritable() && (frame = queue.poll()) != null) {
            queued.decrementAndGet();
            queuedBytes.addAndGet(-frame.length);
            ch.write(Unpooled.wrappedBuffer(frame), ch.voidPromise());
            transport.metrics().sent(peer, frame.length);
            wrote = true;
        }
        if (wrote) {
            ch.flush();
        }
    }

    private synchronized void dial() {
        if (state != State.IDLE) {
            return;
        }
        state = State.CONNECTING;
        if (dialled) {
            transport.metrics().reconnect(peer);
        }
        dialled = true;
        OutboundHandler handler = new OutboundHandler(this, transport);
        attempt = handler;
        dialing = transport.dial(address, handler).subscribe(c -> { }, e -> lost(handler, false));
    }

    /** The peer answered {@code WELCOME} on {@code handler}'s connection. */
    synchronized void welcomed(OutboundHandler handler, Channel ch) {
        if (attempt != handler || state != State.CONNECTING) {
            ch.close();
            return;
        }
        failures = 0;
        channel = ch;
        state = State.CONNECTED;
        scheduleDrain();
    }

    /** {@code handler}'s connection closed, or never opened; {@code welcomed}: it had carried messages. */
    synchronized void lost(OutboundHandler handler, boolean welcomed) {
        if (attempt != handler || state == State.CLOSED) {
            return;
        }
        attempt = null;
        channel = null;
        if (welcomed) {
            state = State.IDLE;
            if (!queue.isEmpty()) {
                dial();
            }
            return;
        }
        state = State.BACKOFF;
        discardQueue(Drop.NOT_CONNECTED);
        Duration delay = transport.backoff(++failures);
        timer = transport.settings().scheduler().schedule(this::backedOff, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    private synchronized void backedOff() {
        if (state == State.BACKOFF) {
            state = State.IDLE;
            if (!queue.isEmpty()) {
                dial();
            }
        }
    }

    /** The peer moved: the current connection is closed, the next dial uses {@code to} at once. */
    synchronized void moveTo(InetSocketAddress to) {
        if (to.equals(address) || state == State.CLOSED) {
            return;
        }
        address = to;
        failures = 0;
        hangUp();
        state = State.IDLE;
        if (!queue.isEmpty()) {
            dial();
        }
    }

    /** Hangs up and dials again (on the next message, or now with messages queued): the peer's key changed. */
    synchronized void redial() {
        if (state == State.CLOSED) {
            return;
        }
        failures = 0;
        hangUp();
        state = State.IDLE;
        if (!queue.isEmpty()) {
            dial();
        }
    }

    /** For good: the peer left the group ({@code unknown_member}), or the transport closed ({@code closed}). */
    synchronized void close(Drop reason) {
        state = State.CLOSED;
        hangUp();
        discardQueue(reason);
    }

    private void hangUp() {
        OutboundHandler a = attempt;
        attempt = null;
        Channel ch = channel;
        channel = null;
        if (timer != null) {
            timer.dispose();
        }
        if (dialing != null) {
            dialing.dispose();
        }
        if (a != null) {
            a.close();
        }
        if (ch != null) {
            ch.close();
        }
    }

    private void discardQueue(Drop reason) {
        int n = 0;
        byte[] frame;
        while ((frame = queue.poll()) != null) {
            queued.decrementAndGet();
            queuedBytes.addAndGet(-frame.length);
            n++;
        }
        if (n > 0) {
            transport.metrics().drop(reason, n);
        }
    }
}
