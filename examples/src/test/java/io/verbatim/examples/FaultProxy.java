package io.verbatim.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy for the fault tests: one directed link between two clusters, that is every connection the
 * caller opens to the callee. It listens on an address of its own with each of the callee's ports and
 * forwards to the callee's address on the same port. Each connection is two pipes, up (caller to callee) and
 * down; each pipe reads chunks as they come and writes them when their due time has come and their direction
 * passes. What it can do to the link:
 *
 * <ul>
 * <li>{@link #stall}: a direction forwards nothing (a blackhole): sockets stay open, bytes (and a close) wait at
 *     the proxy, and then in the sender's buffers; at the heal they flow on in order, as TCP delivers after a
 *     partition its retransmission outlasted. New connections are accepted and stall the same way.</li>
 * <li>{@link #refuse}: every connection is reset (RST both ways) and the ports are closed, so a new connection is
 *     refused until the heal.</li>
 * <li>{@link #halfOpen}: each open connection loses its callee side (reset), while the caller's side stays open
 *     and silent: what the caller writes is taken and dropped, nothing comes back, no close ever arrives. Only
 *     the caller's own timeouts can find out. New connections pass.</li>
 * <li>{@link #latency}: every chunk waits {@code base} plus a uniform draw of up to {@code jitter}, order kept.
 *     Loss: TCP never loses bytes, it retransmits, so a lost segment is a stall of that pipe: with probability
 *     {@code loss} a chunk (and everything behind it) waits a retransmission timeout more, 200 ms doubled for each
 *     loss in a row on the pipe (at most 3.2 s); with probability {@code resets} a chunk resets the connection
 *     instead (a connection given up).</li>
 * </ul>
 *
 * Every draw comes from one {@link Random} seeded at construction. Plain JDK sockets, two threads per pipe.
 */
final class FaultProxy implements AutoCloseable {
    /** A chunk's largest size: what one read takes. */
    private static final int CHUNK_BYTES = 16 * 1024;
    /** Chunks a pipe holds before it stops reading (then the sender's socket buffers fill). */
    private static final int PIPE_CHUNKS = 32;
    private static final long FIRST_RTO_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final int MAX_RTO_DOUBLINGS = 4;

    /** Seeded delays and losses of every chunk; {@link #NONE} passes chunks at once. */
    record Latency(Duration base, Duration jitter, double loss, double resets) {
        static final Latency NONE = new Latency(Duration.ZERO, Duration.ZERO, 0, 0);

        Latency {
            if (base.isNegative() || jitter.isNegative()) {
                throw new IllegalArgumentException("latency: base " + base + " and jitter " + jitter
                        + " must not be negative");
            }
            if (loss < 0 || loss >= 1 || resets < 0 || resets >= 1) {
                throw new IllegalArgumentException("latency: loss " + loss + " and resets " + resets
                        + " must be within [0, 1)");
            }
        }

        @Override
        public String toString() {
            return String.format("%d ms +0..%d ms, loss %.1f %%, resets %.2f %%", base.toMillis(), jitter.toMillis(),
                    loss * 100, resets * 100);
        }
    }

    /** What went through, for the table and the proxy's own tests. */
    record Counts(long accepted, long bytesUp, long bytesDown, long resets, long refused) {
    }

    private final String name;
    private final InetAddress listen;
    private final InetAddress target;
    private final List<Integer> ports;
    private final Random random;
    private final Map<Integer, ServerSocket> listeners = new LinkedHashMap<>();
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong bytesUp = new AtomicLong();
    private final AtomicLong bytesDown = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    // Guarded by this: what the link does now.
    private boolean stallUp;
    private boolean stallDown;
    private boolean refusing;
    private Latency latency = Latency.NONE;
    private boolean closed;

    /**
     * @param name    for threads and messages, e.g. {@code us-east->eu-west}
     * @param listen  the address this link's callers reach the callee at
     * @param target  the callee's address
     * @param ports   the callee's ports: each is listened on at {@code listen} and forwarded to {@code target}
     * @param seed    every draw of delays, losses and resets
     */
    FaultProxy(String name, InetAddress listen, InetAddress target, List<Integer> ports, long seed) {
        if (ports.isEmpty()) {
            throw new IllegalArgumentException(name + ": ports: needs at least one, got " + ports);
        }
        this.name = name;
        this.listen = listen;
        this.target = target;
        this.ports = List.copyOf(ports);
        this.random = new Random(seed);
    }

    /** Opens every port. */
    synchronized FaultProxy start() throws IOException {
        openListeners();
        return this;
    }

    String name() {
        return name;
    }

    InetAddress listenAddress() {
        return listen;
    }

    /** Whether each direction forwards nothing from now on (true) or again (false). */
    synchronized void stall(boolean up, boolean down) {
        stallUp = up;
        stallDown = down;
        notifyAll();
    }

    /** Resets every connection and refuses new ones until {@link #heal}. */
    void refuse() {
        synchronized (this) {
            refusing = true;
            closeListeners();
        }
        for (Connection c : List.copyOf(connections)) {
            c.reset();
        }
    }

    /** Every open connection loses its callee side; its caller's side stays open and hears nothing more. */
    void halfOpen() {
        for (Connection c : List.copyOf(connections)) {
            c.halfOpen();
        }
    }

    synchronized void latency(Latency value) {
        latency = value;
    }

    /**
     * Passes everything again: no stalls, no latency, ports open. Half-open connections stay dead (their callee
     * side is gone) until their callers close them.
     */
    synchronized void heal() throws IOException {
        stallUp = false;
        stallDown = false;
        latency = Latency.NONE;
        if (refusing) {
            refusing = false;
            openListeners();
        }
        notifyAll();
    }

    Counts counts() {
        return new Counts(accepted.get(), bytesUp.get(), bytesDown.get(), resets.get(), refused.get());
    }

    /** Connections open now (half-open ones included). */
    int open() {
        return connections.size();
    }

    /**
     * Takes a connection some other listener accepted for this link (the front door that tells callers apart by
     * their first line), with the bytes already read from it, as if accepted on {@code port}.
     */
    void adopt(Socket caller, byte[] firstBytes, int port) {
        if (!ports.contains(port)) {
            throw new IllegalArgumentException(name + ": port " + port + " is not one of " + ports);
        }
        boolean refusingNow;
        synchronized (this) {
            refusingNow = refusing || closed;
        }
        if (refusingNow) {
            refused.incrementAndGet();
            resetQuietly(caller);
            return;
        }
        accepted.incrementAndGet();
        thread("connect-" + port, () -> connect(caller, firstBytes, port)).start();
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            closeListeners();
            notifyAll();
        }
        for (Connection c : List.copyOf(connections)) {
            c.reset();
        }
    }

    // ---- listening ------------------------------------------------------------------------------

    private void openListeners() throws IOException {
        for (int port : ports) {
            ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(listen, port), 128);
            listeners.put(port, server);
            thread("accept-" + port, () -> accept(server, port)).start();
        }
    }

    private void closeListeners() {
        listeners.values().forEach(FaultProxy::closeQuietly);
        listeners.clear();
    }

    private void accept(ServerSocket server, int port) {
        while (!server.isClosed()) {
            Socket caller;
            try {
                caller = server.accept();
            } catch (IOException e) {
                return; // closed: refused or the proxy closed
            }
            adopt(caller, new byte[0], port);
        }
    }

    private void connect(Socket caller, byte[] firstBytes, int port) {
        Socket callee = new Socket();
        try {
            caller.setTcpNoDelay(true);
            callee.setTcpNoDelay(true);
            callee.connect(new InetSocketAddress(target, port), 5_000);
        } catch (IOException e) {
            // the callee is down (killed, restarting): the caller sees its connection reset, as with no proxy it
            // would see it refused
            refused.incrementAndGet();
            resetQuietly(caller);
            closeQuietly(callee);
            return;
        }
        Connection c = new Connection(caller, callee, port);
        connections.add(c);
        boolean refusingNow;
        synchronized (this) {
            refusingNow = refusing || closed;
        }
        if (refusingNow) { // refused while it connected
            c.reset();
            return;
        }
        c.start(firstBytes);
    }

    // ---- one connection ------------------------------------------------------------------------------

    /** What a pipe carries: bytes, or the end of its direction (a close), or a reset. */
    private record Chunk(byte[] bytes, long dueNanos, Kind kind) {
        enum Kind { DATA, EOF, RESET }
    }

    private final class Connection {
        final Socket caller;
        final Socket callee;
        final int port;
        final Pipe up;
        final Pipe down;
        // Guarded by this.
        boolean halfOpen;
        boolean done;
        int ends;

        Connection(Socket caller, Socket callee, int port) {
            this.caller = caller;
            this.callee = callee;
            this.port = port;
            this.up = new Pipe(this, caller, callee, true);
            this.down = new Pipe(this, callee, caller, false);
        }

        void start(byte[] firstBytes) {
            if (firstBytes.length > 0) {
                up.offer(firstBytes);
            }
            up.startThreads();
            down.startThreads();
        }

        synchronized boolean halfOpenNow() {
            return halfOpen;
        }

        void halfOpen() {
            synchronized (this) {
                if (done || halfOpen) {
                    return;
                }
                halfOpen = true;
            }
            resetQuietly(callee);
            resets.incrementAndGet();
        }

        /** RST both ways. */
        void reset() {
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
            }
            resets.incrementAndGet();
            resetQuietly(caller);
            resetQuietly(callee);
            connections.remove(this);
        }

        /** One direction ended cleanly; both ended: the connection is done. */
        void ended() {
            synchronized (this) {
                if (++ends < 2 || done) {
                    return;
                }
                done = true;
            }
            closeQuietly(caller);
            closeQuietly(callee);
            connections.remove(this);
        }

        /** The caller of a half-open connection went away: nothing is left of it. */
        void callerGone() {
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
            }
            closeQuietly(caller);
            connections.remove(this);
        }

        synchronized boolean isDone() {
            return done;
        }
    }

    /** One direction of a connection: a reader that stamps chunks with their due time, a writer that waits for it. */
    private final class Pipe {
        final Connection connection;
        final Socket from;
        final Socket to;
        final boolean isUp;
        final BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(PIPE_CHUNKS);
        // Only the reader thread touches these.
        long lastDueNanos;
        int lossesInARow;

        Pipe(Connection connection, Socket from, Socket to, boolean isUp) {
            this.connection = connection;
            this.from = from;
            this.to = to;
            this.isUp = isUp;
        }

        void startThreads() {
            String dir = isUp ? "up" : "down";
            thread(dir + "-read-" + connection.port, this::read).start();
            thread(dir + "-write-" + connection.port, this::write).start();
        }

        /** The caller's first bytes, read before this connection was made. */
        void offer(byte[] bytes) {
            queue.add(new Chunk(bytes, System.nanoTime(), Chunk.Kind.DATA));
        }

        private void read() {
            byte[] buffer = new byte[CHUNK_BYTES];
            try {
                InputStream in = from.getInputStream();
                while (true) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        put(Chunk.Kind.EOF, new byte[0]);
                        return;
                    }
                    if (isUp && connection.halfOpenNow()) {
                        continue; // the caller writes into a connection nobody answers
                    }
                    put(Chunk.Kind.DATA, Arrays.copyOf(buffer, n));
                }
            } catch (IOException e) {
                if (connection.halfOpenNow()) {
                    if (isUp) {
                        connection.callerGone();
                    }
                    return; // the callee side was cut on purpose: the caller hears nothing of it
                }
                try {
                    put(Chunk.Kind.RESET, new byte[0]);
                } catch (InterruptedException stop) {
                    Thread.currentThread().interrupt();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void put(Chunk.Kind kind, byte[] bytes) throws InterruptedException {
            if (isUp && kind == Chunk.Kind.EOF && connection.halfOpenNow()) {
                connection.callerGone();
                return;
            }
            long now = System.nanoTime();
            Delay delay;
            boolean reset;
            synchronized (FaultProxy.this) {
                delay = delay(latency, random, lossesInARow);
                reset = kind == Chunk.Kind.DATA && latency.resets() > 0 && random.nextDouble() < latency.resets();
            }
            lossesInARow = delay.lossesInARow();
            long due = Math.max(lastDueNanos, now + delay.nanos());
            lastDueNanos = due;
            Chunk chunk = new Chunk(bytes, due, reset ? Chunk.Kind.RESET : kind);
            while (!queue.offer(chunk, 1, TimeUnit.SECONDS)) {
                if (connection.isDone()) {
                    return; // reset meanwhile: nobody writes this pipe any more
                }
            }
        }

        private void write() {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk chunk = queue.poll(1, TimeUnit.SECONDS);
                    if (chunk == null) {
                        if (connection.isDone()) {
                            return;
                        }
                        continue;
                    }
                    awaitPassing();
                    long wait = chunk.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    awaitPassing(); // a stall that began while the chunk waited holds it too
                    if (connection.halfOpenNow()) {
                        if (!isUp && chunk.kind() != Chunk.Kind.DATA) {
                            return;
                        }
                        continue; // nothing reaches either side of a half-open connection
                    }
                    switch (chunk.kind()) {
                        case DATA -> {
                            out.write(chunk.bytes());
                            out.flush();
                            (isUp ? bytesUp : bytesDown).addAndGet(chunk.bytes().length);
                        }
                        case EOF -> {
                            to.shutdownOutput();
                            connection.ended();
                            return;
                        }
                        case RESET -> {
                            connection.reset();
                            return;
                        }
                    }
                }
            } catch (IOException e) {
                if (!connection.halfOpenNow()) {
                    connection.reset();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void awaitPassing() throws InterruptedException {
            synchronized (FaultProxy.this) {
                while (!closed && (isUp ? stallUp : stallDown)) {
                    FaultProxy.this.wait();
                }
            }
        }
    }

    /** A chunk's delay, and how many chunks in a row the pipe has lost with it. */
    record Delay(long nanos, int lossesInARow) {
    }

    /**
     * A chunk's delay on a link with latency {@code l}: the base, plus a uniform draw of up to the jitter, plus a
     * retransmission timeout when the draw says the chunk was lost (200 ms, doubled for each loss in a row before
     * it, at most 3.2 s).
     */
    static Delay delay(Latency l, Random random, int lossesInARow) {
        long nanos = l.base().toNanos();
        if (!l.jitter().isZero()) {
            nanos += (long) (random.nextDouble() * l.jitter().toNanos());
        }
        if (l.loss() > 0 && random.nextDouble() < l.loss()) {
            return new Delay(nanos + (FIRST_RTO_NANOS << Math.min(lossesInARow, MAX_RTO_DOUBLINGS)), lossesInARow + 1);
        }
        return new Delay(nanos, 0);
    }

    // ---- helpers -----------------------------------------------------------------------------------------

    private Thread thread(String what, Runnable body) {
        Thread t = new Thread(body, "fault-proxy " + name + " " + what);
        t.setDaemon(true);
        return t;
    }

    /** Closes with a reset (RST) rather than a FIN. */
    static void resetQuietly(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (SocketException e) {
            // already closed
        }
        closeQuietly(socket);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // closing what may be gone
        }
    }

    @Override
    public String toString() {
        return name + " " + listen.getHostAddress() + " -> " + target.getHostAddress() + " " + ports;
    }

}
