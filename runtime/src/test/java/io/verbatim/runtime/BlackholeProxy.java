package io.verbatim.runtime;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy that can partition silently: while it is partitioned nothing passes in either direction and
 * nothing is closed (no FIN, no RST), as when a network drops packets. A connection that carried bytes before the
 * partition stays frozen after the heal, as one behind a firewall or NAT that lost its state (the worst a client
 * can meet: its peer never answers again, yet its socket stays open). A connection attempted during the partition
 * is held, and goes through at the heal unless its client gave up meanwhile, as a connect whose SYN the kernel
 * retransmits until one gets through; connections made after the heal pass. Blocking sockets, two threads per
 * connection: for tests with a few connections.
 */
public final class BlackholeProxy implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private volatile boolean partitioned;
    private volatile boolean closed;

    /** Listens on {@code host:port} and forwards every connection to {@code target}. */
    public BlackholeProxy(String host, int port, InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getByName(host), port));
        this.acceptor = new Thread(this::accept, "blackhole-accept-" + port);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** From now on nothing passes: every connection that carried bytes is frozen for good, new ones are held. */
    public synchronized void partition() {
        partitioned = true;
        for (Link link : links) {
            if (!link.held) {
                link.freeze();
            }
        }
    }

    /**
     * Connections pass again: those attempted during the partition go through now (unless their client closed
     * them), new ones pass; those frozen by the partition stay frozen.
     */
    public synchronized void heal() {
        partitioned = false;
        for (Link link : links) {
            if (link.held) {
                link.held = false;
                Thread t = new Thread(() -> link.release(target), "blackhole-release");
                t.setDaemon(true);
                t.start();
            }
        }
    }

    /** Connections the proxy holds, frozen or not. */
    int connections() {
        return links.size();
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Link link = new Link(client);
            synchronized (this) {
                links.add(link);
                if (partitioned) {
                    link.held = true; // open, not connected onwards: a SYN that got no answer yet
                    continue;
                }
            }
            link.open(target);
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        links.forEach(Link::close);
    }

    /** One client connection and its onward connection. */
    private static final class Link {
        private final Socket client;
        private volatile Socket upstream;
        private volatile boolean frozen;
        /** Attempted during a partition, not connected onwards yet. */
        volatile boolean held;

        Link(Socket client) {
            this.client = client;
        }

        void open(InetSocketAddress target) {
            try {
                connect(target, new byte[0]);
            } catch (IOException e) {
                close(); // the target refused: so does the proxy
            }
        }

        /**
         * A held connection goes through, with what its client sent meanwhile, unless the client closed it: it
         * gave up, and a connect given up is never retransmitted.
         */
        void release(InetSocketAddress target) {
            ByteArrayOutputStream sent = new ByteArrayOutputStream();
            try {
                client.setSoTimeout(50);
                byte[] buffer = new byte[64 << 10];
                while (true) {
                    int n = client.getInputStream().read(buffer);
                    if (n < 0) {
                        close();
                        return;
                    }
                    sent.write(buffer, 0, n);
                }
            } catch (SocketTimeoutException e) {
                // still open: it goes through
            } catch (IOException e) {
                close();
                return;
            }
            try {
                client.setSoTimeout(0);
                connect(target, sent.toByteArray());
            } catch (IOException e) {
                close();
            }
        }

        private void connect(InetSocketAddress target, byte[] first) throws IOException {
            Socket up = new Socket();
            up.connect(target, 5_000);
            up.setTcpNoDelay(true);
            client.setTcpNoDelay(true);
            upstream = up;
            if (first.length > 0) {
                up.getOutputStream().write(first);
                up.getOutputStream().flush();
            }
            pump(client, up, "up");
            pump(up, client, "down");
        }

        /** Stops both directions; the sockets stay open. */
        void freeze() {
            frozen = true;
        }

        private void pump(Socket from, Socket to, String direction) {
            Thread t = new Thread(() -> {
                byte[] buffer = new byte[64 << 10];
                try {
                    InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream();
                    while (!frozen) {
                        int n = in.read(buffer);
                        if (n < 0 || frozen) {
                            break; // a frozen link drops what it read and reads no more
                        }
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                    if (!frozen) {
                        to.shutdownOutput(); // a clean end passes on
                    }
                } catch (SocketException e) {
                    if (!frozen) {
                        close();
                    }
                } catch (IOException e) {
                    close();
                }
            }, "blackhole-" + direction + "-" + from.getLocalPort());
            t.setDaemon(true);
            t.start();
        }

        void close() {
            try {
                client.close();
                Socket up = upstream;
                if (up != null) {
                    up.close();
                }
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
