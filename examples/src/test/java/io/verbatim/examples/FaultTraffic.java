package io.verbatim.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keyed messages {@code origin/counter} produced through every cluster's produce endpoint, one thread per
 * cluster, a call of {@code perCall} messages every {@code interval}, each with its own timeout. A 200 is
 * acknowledged; a refused connection sent nothing; anything else (an error status, a reset, no answer in time)
 * is unknown. Keys are drawn from the seed.
 */
final class FaultTraffic {
    record Settings(int perCall, Duration interval, Duration callTimeout, int keys) {
        Settings {
            if (perCall < 1 || keys < 1) {
                throw new IllegalArgumentException("traffic: perCall " + perCall + " and keys " + keys
                        + " must be at least 1");
            }
        }
    }

    /** What one call came to. */
    private enum Outcome { ACKNOWLEDGED, UNKNOWN, NOT_SENT }

    private final NodeProcesses nodes;
    private final Map<String, Integer> adminPorts;
    private final List<String> clusters;
    private final String topic;
    private final String token;
    private final ProduceLedger ledger;
    private final Settings settings;
    private final long seed;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLong calls = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong abandoned = new AtomicLong();
    private final Map<String, String> lastFailure = new ConcurrentHashMap<>();
    private final Set<String> held = ConcurrentHashMap.newKeySet();
    private volatile boolean running;
    private int rounds;

    /** @param adminPorts each cluster's admin port on 127.0.0.1 (where the abandoning client connects) */
    FaultTraffic(NodeProcesses nodes, Map<String, Integer> adminPorts, List<String> clusters, String topic, String token,
            ProduceLedger ledger, Settings settings, long seed) {
        this.nodes = nodes;
        this.adminPorts = Map.copyOf(adminPorts);
        this.clusters = List.copyOf(clusters);
        this.topic = topic;
        this.token = token;
        this.ledger = ledger;
        this.settings = settings;
        this.seed = seed;
    }

    /** Starts producing on every cluster; each start draws keys from its own stream of the seed. */
    synchronized void start() {
        if (running) {
            throw new IllegalStateException("traffic is already running");
        }
        running = true;
        rounds++;
        for (int i = 0; i < clusters.size(); i++) {
            String origin = clusters.get(i);
            Random keys = new Random(seed * 31 + rounds * 1_000_003L + i);
            Thread t = new Thread(() -> produce(origin, keys), "traffic " + origin);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
    }

    /** {@code origin}'s own traffic makes no calls until {@link #release}. */
    void hold(String origin) {
        held.add(origin);
    }

    void release(String origin) {
        held.remove(origin);
    }

    /**
     * While the traffic runs, a second client of {@code origin} that sends produce calls one after another and goes
     * away (a reset) without waiting for the answer, 0 to 20 ms after the request is written (drawn from {@code
     * random}): what a producer with a short timeout does to a node that is slow. Its messages are unknown.
     */
    synchronized void abandonCalls(String origin, Random random) {
        if (!running) {
            throw new IllegalStateException("abandoning calls needs the traffic running");
        }
        Random draws = new Random(random.nextLong());
        Thread t = new Thread(() -> {
            while (running) {
                int first = ledger.reserve(origin, settings.perCall());
                ledger.unknown(origin, first, settings.perCall());
                abandon(origin, body(origin, first, draws), draws.nextInt(21));
            }
        }, "abandoning " + origin);
        t.setDaemon(true);
        t.start();
        threads.add(t);
    }

    /** Stops producing and waits for the calls in flight (at most their timeout). */
    synchronized void stop() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(settings.callTimeout().toMillis() + settings.interval().toMillis() + 5_000);
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not stop");
            }
        }
        threads.clear();
    }

    /**
     * One call to {@code origin}, waiting up to {@code timeout} for its answer: empty when acknowledged, else what
     * came instead.
     */
    Optional<String> probe(String origin, Duration timeout) {
        int first = ledger.reserve(origin, settings.perCall());
        Outcome o = call(origin, first, body(origin, first, new Random(seed + first)), timeout);
        return o == Outcome.ACKNOWLEDGED ? Optional.empty() : Optional.of(o + ": " + lastFailure.get(origin));
    }

    long calls() {
        return calls.get();
    }

    /** Calls whose connection was refused (the node down): their messages were never sent. */
    long refused() {
        return refused.get();
    }

    /** Each origin's last failed call (its status and answer, or the exception), for a failure's message. */
    Map<String, String> lastFailures() {
        return Map.copyOf(lastFailure);
    }

    private void produce(String origin, Random keys) {
        while (running) {
            if (!held.contains(origin)) {
                int first = ledger.reserve(origin, settings.perCall());
                call(origin, first, body(origin, first, keys), settings.callTimeout());
            }
            pause();
        }
    }

    private String body(String origin, int first, Random keys) {
        StringBuilder body = new StringBuilder("{\"messages\":[");
        for (int m = 0; m < settings.perCall(); m++) {
            String payload = Base64.getEncoder().encodeToString((origin + "/" + (first + m))
                    .getBytes(StandardCharsets.UTF_8));
            body.append(m == 0 ? "" : ",").append("{\"key\":\"k").append(keys.nextInt(settings.keys()))
                    .append("\",\"payload\":\"").append(payload).append("\"}");
        }
        return body.append("]}").toString();
    }

    /** One produce call; records its messages in the ledger as what came of it. */
    private Outcome call(String origin, int first, String body, Duration timeout) {
        calls.incrementAndGet();
        Outcome outcome;
        try {
            HttpResponse<String> r = nodes.call(origin, "POST", path(), body, timeout);
            outcome = r.statusCode() == 200 ? Outcome.ACKNOWLEDGED : Outcome.UNKNOWN;
            if (outcome != Outcome.ACKNOWLEDGED) {
                lastFailure.put(origin, r.statusCode() + " " + r.body().strip());
            }
        } catch (ConnectException e) {
            refused.incrementAndGet(); // the request never left: its counters stay unsent
            return Outcome.NOT_SENT;
        } catch (IOException e) {
            outcome = Outcome.UNKNOWN; // reset or timed out: maybe stored, maybe not
            lastFailure.put(origin, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = Outcome.UNKNOWN;
        }
        if (outcome == Outcome.ACKNOWLEDGED) {
            ledger.acknowledged(origin, first, settings.perCall());
        } else {
            ledger.unknown(origin, first, settings.perCall());
        }
        return outcome;
    }

    /** Writes a produce request on a connection of its own and resets it {@code afterMillis} later. */
    private void abandon(String origin, String body, int afterMillis) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", adminPorts.get(origin)), 2_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + path() + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token
                    + "\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
            TimeUnit.MILLISECONDS.sleep(afterMillis);
            s.setSoLinger(true, 0);
            abandoned.incrementAndGet();
        } catch (IOException e) {
            // the node is down: nothing to abandon
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String path() {
        return "/admin/v2/scalable/produce?topic=" + NodeProcesses.enc(topic);
    }

    private void pause() {
        try {
            TimeUnit.MILLISECONDS.sleep(settings.interval().toMillis());
        } catch (InterruptedException e) {
            running = false;
        }
    }
}
