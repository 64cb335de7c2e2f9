package io.verbatim.examples;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The address a cluster advertises itself at, for the URLs it hands out: a peer's replicators open their
 * sessions at the broker URLs of that cluster's layout stream, not at the addresses their own configuration
 * names. One address cannot mean a different link to each caller, so this door reads a connection's request
 * line and hands the connection to the caller's link by the producer it names ({@code
 * producer=pulsar.repl.<caller>.<segment>}, which the ingest endpoint requires of every session). A connection
 * that names no producer is closed and counted ({@link #unattributed}): a suite that finds any has a path its
 * faults do not cover. One closed before it sent a byte is just closed.
 */
final class FrontDoor implements AutoCloseable {
    private static final int MAX_REQUEST_LINE = 8 * 1024;
    private static final Pattern PRODUCER = Pattern.compile("[?&]producer=([^&\\s]+)");
    private static final String PREFIX = "pulsar.repl.";

    private final String callee;
    private final InetAddress listen;
    private final List<Integer> ports;
    private final Function<String, Optional<FaultProxy>> linkFrom;
    private final List<ServerSocket> listeners = new ArrayList<>();
    private final AtomicLong unattributed = new AtomicLong();
    private final AtomicLong handedOver = new AtomicLong();
    private final List<String> strangers = new CopyOnWriteArrayList<>();

    /**
     * @param linkFrom the link from a caller (by cluster name) to {@code callee}, if the caller is known
     */
    FrontDoor(String callee, InetAddress listen, List<Integer> ports, Function<String, Optional<FaultProxy>> linkFrom) {
        this.callee = callee;
        this.listen = listen;
        this.ports = List.copyOf(ports);
        this.linkFrom = linkFrom;
    }

    synchronized FrontDoor start() throws IOException {
        for (int port : ports) {
            ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(listen, port), 128);
            listeners.add(server);
            Thread t = new Thread(() -> accept(server, port), "front-door " + callee + " " + port);
            t.setDaemon(true);
            t.start();
        }
        return this;
    }

    /** Connections that named no known caller and were closed. */
    long unattributed() {
        return unattributed.get();
    }

    /** The first lines of the first few connections that named no caller. */
    List<String> strangers() {
        return List.copyOf(strangers);
    }

    /** Connections handed to a link. */
    long handedOver() {
        return handedOver.get();
    }

    /** The cluster a session's producer name says is calling, e.g. {@code us-east} for {@code pulsar.repl.us-east.3}. */
    static Optional<String> caller(String requestLine) {
        Matcher m = PRODUCER.matcher(requestLine);
        if (!m.find()) {
            return Optional.empty();
        }
        String producer = URLDecoder.decode(m.group(1), StandardCharsets.UTF_8);
        int lastDot = producer.lastIndexOf('.');
        if (!producer.startsWith(PREFIX) || lastDot <= PREFIX.length()) {
            return Optional.empty();
        }
        return Optional.of(producer.substring(PREFIX.length(), lastDot));
    }

    private void accept(ServerSocket server, int port) {
        while (!server.isClosed()) {
            Socket caller;
            try {
                caller = server.accept();
            } catch (IOException e) {
                return;
            }
            Thread t = new Thread(() -> route(caller, port), "front-door " + callee + " route");
            t.setDaemon(true);
            t.start();
        }
    }

    private void route(Socket caller, int port) {
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        try {
            caller.setSoTimeout(10_000);
            InputStream in = caller.getInputStream();
            int b;
            while ((b = in.read()) >= 0 && first.size() < MAX_REQUEST_LINE) {
                first.write(b);
                if (b == '\n') {
                    break;
                }
            }
            caller.setSoTimeout(0);
        } catch (IOException e) {
            FaultProxy.resetQuietly(caller);
            return;
        }
        if (first.size() == 0) {
            FaultProxy.resetQuietly(caller); // closed before it said anything (a session given up as it opened)
            return;
        }
        Optional<FaultProxy> link = caller(first.toString(StandardCharsets.ISO_8859_1)).flatMap(linkFrom);
        if (link.isEmpty()) {
            if (unattributed.incrementAndGet() <= 5) {
                strangers.add(first.toString(StandardCharsets.ISO_8859_1).strip());
            }
            FaultProxy.resetQuietly(caller);
            return;
        }
        handedOver.incrementAndGet();
        link.get().adopt(caller, first.toByteArray(), port);
    }

    @Override
    public synchronized void close() {
        for (ServerSocket s : listeners) {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }
        listeners.clear();
    }
}
