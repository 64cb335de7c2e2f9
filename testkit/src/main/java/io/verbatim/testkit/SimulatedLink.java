package io.verbatim.testkit;

import io.verbatim.pipeline.RemoteCluster;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A network link of a given rate and round trip in front of a remote: the bytes of every send, of every
 * session over it, serialise on one queue (a send leaves at {@code max(now, link free) + bytes ÷ rate}),
 * and its receipt comes back one round trip after it left. Timed on the scheduler it is given (virtual
 * time in tests). The remote takes each send as it is made, in order; only its receipt is held back, so
 * what the sender sees is the link's.
 */
public final class SimulatedLink {
    private final long bytesPerSecond;
    private final long rttNanos;
    private final Scheduler scheduler;
    private long freeAtNanos = Long.MIN_VALUE;
    private long bytes;

    /** A link of {@code bytesPerSecond} with a round trip of {@code rtt}, timed on {@code scheduler}. */
    public SimulatedLink(long bytesPerSecond, Duration rtt, Scheduler scheduler) {
        if (bytesPerSecond < 1 || rtt.isNegative()) {
            throw new IllegalArgumentException("a link of " + bytesPerSecond + " bytes/s and a round trip of " + rtt
                    + " cannot carry anything");
        }
        this.bytesPerSecond = bytesPerSecond;
        this.rttNanos = rtt.toNanos();
        this.scheduler = scheduler;
    }

    public long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** Bytes sent over the link so far. */
    public synchronized long bytesSent() {
        return bytes;
    }

    /**
     * When the receipt of a send of {@code size} bytes made at {@code nowNanos} comes back: the pure
     * decision, exposed for tests.
     */
    synchronized long receiptAt(long nowNanos, long size) {
        long start = Math.max(nowNanos, freeAtNanos);
        freeAtNanos = start + (long) Math.ceil(size * 1e9 / bytesPerSecond);
        bytes += size;
        return freeAtNanos + rttNanos;
    }

    /** {@code remote}, reached over this link. */
    public RemoteCluster over(RemoteCluster remote) {
        return InterceptedRemote.of(remote, (entry, position, send) -> Mono.defer(() -> {
            long at = receiptAt(scheduler.now(TimeUnit.NANOSECONDS), entry.encodedSize());
            return send.flatMap(r -> {
                long wait = at - scheduler.now(TimeUnit.NANOSECONDS);
                return wait <= 0 ? Mono.just(r) : Mono.delay(Duration.ofNanos(wait), scheduler).thenReturn(r);
            });
        }));
    }
}
