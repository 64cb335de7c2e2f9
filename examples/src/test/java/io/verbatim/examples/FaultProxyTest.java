package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fault tests' TCP proxy on loopback, against an echo server behind it: what each fault does to bytes and
 * connections, and that its delays are the seed's. A check that nothing arrives waits a fixed 300 ms (a
 * negative over real sockets has no event to wait for); every positive check waits for its bytes.
 */
class FaultProxyTest {
    private static final long SEED = Long.getLong("verbatim.seed", 20240523L);
    private static final Duration QUIET = Duration.ofMillis(300);

    private ServerSocket server;
    private final BlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private FaultProxy proxy;
    private int port;

    @BeforeEach
    void echoServerBehindAProxy() throws IOException {
        server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
        port = server.getLocalPort();
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    accepted.add(server.accept());
                } catch (IOException e) {
                    return;
                }
            }
        }, "echo-accept");
        t.setDaemon(true);
        t.start();
        proxy = new FaultProxy("a->b", InetAddress.getByName("127.0.30.1"), InetAddress.getByName("127.0.0.1"),
                List.of(port), SEED).start();
    }

    @AfterEach
    void close() throws Exception {
        proxy.close();
        server.close();
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.30.1", port), 2_000);
        s.setSoTimeout(10_000);
        closing.add(s);
        return s;
    }

    private Socket calleeSide() throws InterruptedException {
        Socket s = accepted.poll(10, TimeUnit.SECONDS);
        assertThat(s).as("the proxy connected to the callee").isNotNull();
        closing.add(s);
        return s;
    }

    private static byte[] readExactly(InputStream in, int n) throws IOException {
        byte[] out = in.readNBytes(n);
        assertThat(out).as("bytes read before the stream ended").hasSize(n);
        return out;
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aPassingLinkForwardsEveryByteBothWaysInOrder() throws Exception {
        Socket caller = connect();
        Socket callee = calleeSide();
        byte[] up = bytes(1 << 20, SEED);
        byte[] down = bytes(1 << 19, SEED + 1);
        Thread writer = new Thread(() -> {
            try {
                caller.getOutputStream().write(up);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });
        writer.start();
        callee.getOutputStream().write(down);
        assertThat(readExactly(callee.getInputStream(), up.length)).isEqualTo(up);
        assertThat(readExactly(caller.getInputStream(), down.length)).isEqualTo(down);
        writer.join();
        caller.shutdownOutput();
        assertThat(callee.getInputStream().read()).as("the caller's close reaches the callee").isEqualTo(-1);
        assertThat(proxy.counts().bytesUp()).isEqualTo(up.length);
        assertThat(proxy.counts().bytesDown()).isEqualTo(down.length);
    }

    @Test
    void aStalledLinkForwardsNothingUntilTheHealThenEverythingInOrder() throws Exception {
        Socket caller = connect();
        Socket callee = calleeSide();
        proxy.stall(true, true);
        caller.getOutputStream().write("first".getBytes(StandardCharsets.UTF_8));
        callee.getOutputStream().write("back".getBytes(StandardCharsets.UTF_8));
        caller.getOutputStream().write("second".getBytes(StandardCharsets.UTF_8));
        callee.setSoTimeout((int) QUIET.toMillis());
        caller.setSoTimeout((int) QUIET.toMillis());
        assertThatThrownBy(() -> callee.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        assertThatThrownBy(() -> caller.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        // a new connection during the blackhole is taken, and stalls as well
        Socket late = connect();
        Socket lateCallee = calleeSide();
        late.getOutputStream().write(7);
        lateCallee.setSoTimeout((int) QUIET.toMillis());
        assertThatThrownBy(() -> lateCallee.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);

        proxy.heal();
        callee.setSoTimeout(10_000);
        caller.setSoTimeout(10_000);
        lateCallee.setSoTimeout(10_000);
        assertThat(new String(readExactly(callee.getInputStream(), 11), StandardCharsets.UTF_8)).isEqualTo("firstsecond");
        assertThat(new String(readExactly(caller.getInputStream(), 4), StandardCharsets.UTF_8)).isEqualTo("back");
        assertThat(lateCallee.getInputStream().read()).isEqualTo(7);
    }

    @Test
    void aOneWayStallHoldsOneDirectionAndPassesTheOther() throws Exception {
        Socket caller = connect();
        Socket callee = calleeSide();
        proxy.stall(false, true); // the callee's bytes are held; the caller's pass
        caller.getOutputStream().write("ping".getBytes(StandardCharsets.UTF_8));
        assertThat(new String(readExactly(callee.getInputStream(), 4), StandardCharsets.UTF_8)).isEqualTo("ping");
        callee.getOutputStream().write("pong".getBytes(StandardCharsets.UTF_8));
        callee.shutdownOutput(); // a close is held like any byte
        caller.setSoTimeout((int) QUIET.toMillis());
        assertThatThrownBy(() -> caller.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        proxy.heal();
        caller.setSoTimeout(10_000);
        assertThat(new String(readExactly(caller.getInputStream(), 4), StandardCharsets.UTF_8)).isEqualTo("pong");
        assertThat(caller.getInputStream().read()).isEqualTo(-1);
    }

    @Test
    void refusingResetsOpenConnectionsAndRefusesNewOnesUntilTheHeal() throws Exception {
        Socket caller = connect();
        Socket callee = calleeSide();
        proxy.refuse();
        assertThatThrownBy(() -> caller.getInputStream().read()).as("the caller's side is reset")
                .isInstanceOf(SocketException.class);
        assertThatThrownBy(() -> callee.getInputStream().read()).as("the callee's side is reset")
                .isInstanceOf(SocketException.class);
        assertNewConnectionGoesNowhere();
        proxy.heal();
        Socket again = connect();
        Socket againCallee = calleeSide();
        again.getOutputStream().write(42);
        assertThat(againCallee.getInputStream().read()).isEqualTo(42);
        assertThat(proxy.counts().resets()).isEqualTo(1);
    }

    /**
     * A connection made while the proxy refuses is refused, and reaches no callee. The kernel may complete a
     * handshake on a closed listener for a moment (a process forked just then holds its descriptor until it closes
     * it; seen once in CI): that connection is then reset or hears nothing, and still reaches no callee.
     */
    private void assertNewConnectionGoesNowhere() throws Exception {
        Socket s = new Socket();
        closing.add(s);
        try {
            s.connect(new InetSocketAddress("127.0.30.1", port), 2_000);
        } catch (ConnectException refused) {
            return;
        }
        s.setSoTimeout((int) QUIET.toMillis());
        try {
            assertThat(s.getInputStream().read()).as("a connection made while refusing hears nothing").isEqualTo(-1);
        } catch (SocketTimeoutException | SocketException nothingOrReset) {
            // as it should
        }
        assertThat(accepted.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS)).as("no connection reached the callee")
                .isNull();
    }

    @Test
    void aHalfOpenConnectionLosesItsCalleeWhileItsCallerHearsNothing() throws Exception {
        Socket caller = connect();
        Socket callee = calleeSide();
        caller.getOutputStream().write(1);
        assertThat(callee.getInputStream().read()).isEqualTo(1);
        proxy.halfOpen();
        assertThatThrownBy(() -> callee.getInputStream().read()).as("the callee's side is reset")
                .isInstanceOf(SocketException.class);
        // the caller may go on writing: taken and dropped, never answered, never closed
        OutputStream out = caller.getOutputStream();
        for (int i = 0; i < 100; i++) {
            out.write(new byte[1024]);
        }
        caller.setSoTimeout((int) QUIET.toMillis());
        assertThatThrownBy(() -> caller.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        assertThat(proxy.open()).isEqualTo(1);
        // new connections pass
        Socket fresh = connect();
        Socket freshCallee = calleeSide();
        fresh.getOutputStream().write(9);
        assertThat(freshCallee.getInputStream().read()).isEqualTo(9);
        // the caller's own close ends what is left of the half-open one
        caller.close();
        awaitOpen(1);
    }

    private void awaitOpen(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (proxy.open() != n && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(proxy.open()).isEqualTo(n);
    }

    @Test
    void latencyDelaysEachWayByAtLeastItsBaseAndKeepsTheOrder() throws Exception {
        Socket caller = connect();
        Socket callee = calleeSide();
        proxy.latency(new FaultProxy.Latency(Duration.ofMillis(100), Duration.ofMillis(50), 0, 0));
        Thread echo = new Thread(() -> {
            try {
                InputStream in = callee.getInputStream();
                OutputStream out = callee.getOutputStream();
                byte[] b = new byte[4096];
                int n;
                while ((n = in.read(b)) > 0) {
                    out.write(b, 0, n);
                }
            } catch (IOException e) {
                // closed at the end
            }
        });
        echo.setDaemon(true);
        echo.start();
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            byte[] b = ("message " + i + ";").getBytes(StandardCharsets.UTF_8);
            caller.getOutputStream().write(b);
            sent.write(b);
        }
        byte[] back = readExactly(caller.getInputStream(), sent.size());
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(back).isEqualTo(sent.toByteArray());
        assertThat(elapsedMs).as("a round trip through 100 ms each way").isGreaterThanOrEqualTo(200);
    }

    @Test
    void aChunksDelayIsTheBasePlusJitterAndALossAddsADoublingRetransmissionTimeout() {
        FaultProxy.Latency l = new FaultProxy.Latency(Duration.ofMillis(40), Duration.ofMillis(20), 0.3, 0);
        Random random = new Random(SEED);
        int losses = 0;
        int lost = 0;
        for (int i = 0; i < 10_000; i++) {
            FaultProxy.Delay d = FaultProxy.delay(l, random, losses);
            long extra = d.nanos() - TimeUnit.MILLISECONDS.toNanos(40);
            if (d.lossesInARow() == 0) {
                assertThat(extra).as("seed " + SEED + ", draw " + i).isBetween(0L, TimeUnit.MILLISECONDS.toNanos(20));
            } else {
                lost++;
                assertThat(d.lossesInARow()).isEqualTo(losses + 1);
                long rto = TimeUnit.MILLISECONDS.toNanos(200) << Math.min(losses, 4);
                assertThat(extra - rto).as("seed " + SEED + ", draw " + i).isBetween(0L, TimeUnit.MILLISECONDS.toNanos(20));
            }
            losses = d.lossesInARow();
        }
        assertThat(lost).as("seed " + SEED + ": about 30 % lost").isBetween(2_700, 3_300);
    }

    @Test
    void theSameSeedDrawsTheSameDelays() {
        FaultProxy.Latency l = new FaultProxy.Latency(Duration.ofMillis(5), Duration.ofMillis(50), 0.1, 0);
        long[] first = draws(l, new Random(SEED));
        assertThat(draws(l, new Random(SEED))).isEqualTo(first);
        assertThat(draws(l, new Random(SEED + 1))).isNotEqualTo(first);
    }

    private static long[] draws(FaultProxy.Latency l, Random random) {
        long[] out = new long[100];
        int losses = 0;
        for (int i = 0; i < out.length; i++) {
            FaultProxy.Delay d = FaultProxy.delay(l, random, losses);
            out[i] = d.nanos();
            losses = d.lossesInARow();
        }
        return out;
    }

    @Test
    void aLatencyOutOfRangeIsRefusedNamingTheValue() {
        assertThatThrownBy(() -> new FaultProxy.Latency(Duration.ofMillis(-1), Duration.ZERO, 0, 0))
                .hasMessageContaining("base PT-0.001S");
        assertThatThrownBy(() -> new FaultProxy.Latency(Duration.ZERO, Duration.ZERO, 1.0, 0))
                .hasMessageContaining("loss 1.0");
    }

    @Test
    void theFrontDoorHandsASessionToItsCallersLinkAndClosesWhatNamesNoCaller() throws Exception {
        FrontDoor door = new FrontDoor("b", InetAddress.getByName("127.0.30.2"), List.of(port),
                caller -> caller.equals("a") ? Optional.of(proxy) : Optional.empty()).start();
        closing.add(door);
        Socket s = new Socket("127.0.30.2", port);
        closing.add(s);
        byte[] line = "GET /ingest/v1/session?topic=t&segment=3&producer=pulsar.repl.a.3 HTTP/1.1\r\nHost: x\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII);
        s.getOutputStream().write(line);
        Socket callee = calleeSide();
        assertThat(readExactly(callee.getInputStream(), line.length)).isEqualTo(line);
        assertThat(proxy.counts().accepted()).isEqualTo(1);

        Socket stranger = new Socket("127.0.30.2", port);
        closing.add(stranger);
        stranger.setSoTimeout(10_000);
        stranger.getOutputStream().write("GET /ingest/v1/layouts?topic=t HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        try {
            assertThat(stranger.getInputStream().read()).isEqualTo(-1);
        } catch (SocketException reset) {
            // closed with a reset: as good
        }
        assertThat(door.unattributed()).isEqualTo(1);
        assertThat(door.handedOver()).isEqualTo(1);
    }

    @Test
    void aSessionsCallerIsTheClusterItsProducerNames() {
        assertThat(FrontDoor.caller("GET /ingest/v1/session?topic=x&segment=3&producer=pulsar.repl.us-east.3 HTTP/1.1"))
                .contains("us-east");
        assertThat(FrontDoor.caller("GET /ingest/v1/session?producer=pulsar.repl.eu%2Dwest.12&topic=x HTTP/1.1"))
                .contains("eu-west");
        assertThat(FrontDoor.caller("GET /ingest/v1/layouts?topic=x HTTP/1.1")).isEmpty();
        assertThat(FrontDoor.caller("GET /ingest/v1/session?producer=someone HTTP/1.1")).isEmpty();
        assertThat(FrontDoor.caller("GET /?producer=pulsar.repl..3 HTTP/1.1")).isEmpty();
    }
}
