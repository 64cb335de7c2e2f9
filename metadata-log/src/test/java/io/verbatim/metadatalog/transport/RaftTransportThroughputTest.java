package io.verbatim.metadatalog.transport;

import static org.assertj.core.api.Assertions.fail;

import io.netty.handler.ssl.ClientAuth;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.net.TestCertificates;
import io.verbatim.net.Tls;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;

/**
 * Messages/s and MB/s of 1 KiB AppendEntries from a to b on loopback, plain and over mutual TLS. Prints
 * only: a rate depends on the machine, so nothing is asserted but that every message arrived. The sender
 * keeps at most {@value #WINDOW} messages in flight, as a leader's in-flight window would. Runs only with
 * {@code -Dverbatim.measure=true}, outside the test run's time.
 */
@EnabledIfSystemProperty(named = "verbatim.measure", matches = "true")
class RaftTransportThroughputTest {
    private static final String G = "meta";
    private static final int WINDOW = 512;
    private static final int WARM_UP = 2_000;
    private static final int MEASURED = 20_000;
    @TempDir
    Path dir;

    @Test
    void plain() {
        measure("plain", member -> null);
    }

    @Test
    void mutualTls() throws Exception {
        long c0 = System.nanoTime();
        TestCertificates ca = new TestCertificates(dir, "bench-ca");
        Path[] a = ca.issue("a");
        Path[] b = ca.issue("b");
        Map<String, Tls> tls = Map.of("a", new Tls(a[0], a[1], ca.caFile(), ClientAuth.REQUIRE),
                "b", new Tls(b[0], b[1], ca.caFile(), ClientAuth.REQUIRE));
        System.out.printf("raft transport throughput, mutual TLS: certificates made in %.2f s%n",
                (System.nanoTime() - c0) / 1e9);
        measure("mutual TLS", tls::get);
    }

    private void measure(String what, Function<String, Tls> tls) {
        long s0 = System.nanoTime();
        NettyRaftTransport b = NettyGroup.builder("b", G).tls(tls.apply("b")).bind("127.0.0.1", 0)
                .peers(Map.of("a", "127.0.0.1:1")).start();
        NettyRaftTransport a = NettyGroup.builder("a", G).tls(tls.apply("a")).bind("127.0.0.1", 0)
                .peers(Map.of("b", "127.0.0.1:" + b.port())).start();
        System.out.printf("raft transport throughput, %s: started in %.2f s%n", what, (System.nanoTime() - s0) / 1e9);
        AtomicLong received = new AtomicLong();
        Disposable inbox = b.inbound().subscribe(m -> received.incrementAndGet());
        try {
            RaftMessageProto m = Messages.append("a", "b", G, 1, 1024);
            long w0 = System.nanoTime();
            run(a, b, m, WARM_UP, received);
            System.out.printf("raft transport throughput, %s: connected and warmed up (%d messages) in %.2f s%n", what,
                    WARM_UP, (System.nanoTime() - w0) / 1e9);
            long bytes0 = a.metrics().bytesSent("b");
            long t0 = System.nanoTime();
            run(a, b, m, MEASURED, received);
            double seconds = (System.nanoTime() - t0) / 1e9;
            double mb = (a.metrics().bytesSent("b") - bytes0) / 1e6;
            System.out.printf("raft transport throughput, %s: %d AppendEntries of %d bytes in %.2f s: %.0f msg/s, "
                    + "%.1f MB/s%n", what, MEASURED, Frames.messageFrameBytes(m), seconds, MEASURED / seconds,
                    mb / seconds);
        } finally {
            long c0 = System.nanoTime();
            inbox.dispose();
            a.close();
            b.close();
            System.out.printf("raft transport throughput, %s: closed in %.2f s%n", what, (System.nanoTime() - c0) / 1e9);
        }
    }

    /** Sends {@code n} more, at most {@link #WINDOW} unanswered, and waits until all arrived. */
    private static void run(NettyRaftTransport a, NettyRaftTransport b, RaftMessageProto m, int n,
            AtomicLong received) {
        long target = received.get() + n;
        long sent = received.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Poll.BOUND_SECONDS * 4);
        while (received.get() < target) {
            if (a.metrics().dropped() + b.metrics().dropped() > 0) {
                fail("dropped: a " + a.metrics().dropped() + ", b " + b.metrics().dropped());
            }
            if (System.nanoTime() - deadline > 0) {
                fail("only " + received.get() + " of " + target + " arrived");
            }
            if (sent < target && sent - received.get() < WINDOW) {
                a.send(m);
                sent++;
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
    }
}
