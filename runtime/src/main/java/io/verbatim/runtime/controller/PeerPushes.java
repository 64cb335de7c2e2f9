package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.config.ClusterUrls;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ExchangeConfig;
import io.verbatim.exchange.ExchangeTransport;
import io.verbatim.exchange.HttpTransport;
import io.verbatim.exchange.Pusher;
import io.verbatim.net.NetClient;
import io.verbatim.pipeline.ExchangeGate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * This cluster's controller toward its peers: the calls that carry its state to their controllers (over the
 * simulated WAN's delay when there is one), the pushes while it leads, started again at once when another controller
 * replica takes over the metadata log (R-E5), and the R-C11 gate its replicators ask.
 */
public final class PeerPushes {
    private static final Logger LOG = Loggers.getLogger(PeerPushes.class);

    private final String name;
    private final Controller controller;
    private final ExchangeConfig config;
    private final Scheduler timer;
    private final BooleanSupplier stopping;
    private final AtomicLong failovers = new AtomicLong();
    private @Nullable ExchangeTransport transport;
    private @Nullable Pusher pusher;
    private boolean stopped;

    /** @param stopping whether the node is stopping: a failover then starts no pushes */
    public PeerPushes(String name, Controller controller, ExchangeConfig config, Scheduler timer,
            BooleanSupplier stopping) {
        this.name = name;
        this.controller = controller;
        this.config = config;
        this.timer = timer;
        this.stopping = stopping;
    }

    /**
     * Reaches {@code peers}' controllers through {@code client}, each call delayed by half of {@code rtt} each way
     * (the simulated WAN delays the exchange as it delays replication), and pushes to them if {@code push} (a
     * brokers' process whose controller replicas run on their own does not).
     */
    public synchronized void connect(Map<String, ClusterUrls> peers, NetClient client, Duration rtt, boolean push) {
        Map<String, List<String>> exchangeUrls = new TreeMap<>();
        peers.forEach((peer, address) -> exchangeUrls.put(peer, address.exchangeUrls()));
        ExchangeTransport http = HttpTransport.toReplicas(exchangeUrls, client);
        Duration half = rtt.dividedBy(2);
        transport = half.isZero() ? http : (peer, request) -> Mono.delay(half, timer)
                .then(http.send(peer, request)).delayElement(half, timer);
        if (push) {
            pusher = new Pusher(controller, transport, config, timer).start();
        }
    }

    /**
     * A new controller replica leads the metadata log (the old leader crashed or was cut off): as a new
     * controller leader it knows nothing of its peers, defers its own layout changes until it holds every
     * peer's state, and pushes its state to every peer at once (R-E5).
     */
    public synchronized void failover(String leader) {
        ExchangeTransport to = transport;
        Pusher before = pusher;
        if (stopped || stopping.getAsBoolean() || before == null || to == null) {
            return;
        }
        LOG.info("{}: controller replica {} leads the metadata log now; pushing to every peer, own changes "
                + "deferred until every peer's state is held", name, leader);
        failovers.incrementAndGet();
        before.dispose();
        controller.becomeLeader();
        pusher = new Pusher(controller, to, config, timer).start();
    }

    /** How many times another controller replica took over as leader since the start. */
    public long failovers() {
        return failovers.get();
    }

    /**
     * R-C11: a replicator writes to a remote only while the remote takes part in the exchange: the
     * controller's verdict on it, re-evaluated on every call (a remote that answers after a 404 is ready).
     */
    public static ExchangeGate gate(Controller controller) {
        return remote -> controller.verdicts(remote)
                .map(ok -> ok ? ExchangeGate.Readiness.READY : ExchangeGate.Readiness.UNSUPPORTED);
    }

    public void bindTo(MeterRegistry registry) {
        FunctionCounter.builder("verbatim.controller.failovers", failovers, AtomicLong::get)
                .description("times another controller replica took over as the metadata log's leader")
                .register(registry);
    }

    /** Stops pushing. */
    public synchronized void stop() {
        stopped = true;
        if (pusher != null) {
            pusher.dispose();
        }
    }
}
