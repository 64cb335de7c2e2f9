package io.verbatim.runtime.broker;

import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.InFlightBudget;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.ReplicationLink;
import io.verbatim.pipeline.ReplicatorStatus;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One broker of a cluster: its slow-path budget, its bytes in flight (shared by all its replicators), its
 * ingest endpoint (where peers' replicators write), and the replication links of the segments it owns —
 * those whose id modulo the cluster's broker count is its index.
 */
public final class Broker {
    private static final Logger LOG = Loggers.getLogger(Broker.class);
    private final int index;
    private final int brokers;
    private final BrokerBudget budget;
    private final InFlightBudget inFlight;
    private final IngestServer ingest;
    private final List<ReplicationLink> links = new CopyOnWriteArrayList<>();
    /** Links stopped because they failed to follow ownership. */
    private final Set<ReplicationLink> failed = ConcurrentHashMap.newKeySet();
    private @Nullable String host;
    private int port;

    public Broker(int index, int brokers, BrokerBudget budget, InFlightBudget inFlight, IngestServer ingest) {
        this.index = index;
        this.brokers = brokers;
        this.budget = budget;
        this.inFlight = inFlight;
        this.ingest = ingest;
    }

    /** Binds the ingest endpoint to {@code host:port} (0 picks a free port). */
    public void listen(String host, int port) {
        ingest.start(host, port);
        this.host = host;
        this.port = ingest.port();
    }

    /** The ingest port bound (kept across {@link #stopIngest()} so a restart takes the same one). */
    public int port() {
        return port;
    }

    boolean owns(Segment s) {
        return Math.floorMod(s.id(), (long) brokers) == index;
    }

    /** Starts a link of one topic toward one remote for the segments this broker owns, on its budgets. */
    public ReplicationLink replicate(Supplier<ReplicationLink.Builder> link) {
        return replicate(link, s -> true);
    }

    /**
     * Starts a link toward one remote for the segments this broker owns among those {@code process} selects (what
     * this broker process owns of the cluster's segments), on its budgets.
     */
    public ReplicationLink replicate(Supplier<ReplicationLink.Builder> link, Predicate<Segment> process) {
        return replicate(link, process, s -> false);
    }

    /**
     * As {@link #replicate(Supplier, Predicate)}, handing over rather than stopping at once the segments
     * {@code handsOver} selects once the process no longer owns them ({@link ReplicationLink.Builder#handsOver}).
     */
    public ReplicationLink replicate(Supplier<ReplicationLink.Builder> link, Predicate<Segment> process,
            Predicate<Segment> handsOver) {
        ReplicationLink started = link.get().owned(s -> owns(s) && process.test(s))
                .handsOver(s -> owns(s) && handsOver.test(s)).budget(budget)
                .inFlightBudget(inFlight).build().start();
        links.add(started);
        return started;
    }

    /**
     * Asks every link which segments it owns again (the process's ownership moved). A link that fails to is
     * stopped whole (fail closed: it must not go on with a segment given away); it starts again at the next change.
     */
    public void reconsider() {
        for (ReplicationLink link : links) {
            try {
                if (failed.remove(link)) {
                    link.start();
                }
                link.reconsider();
            } catch (RuntimeException e) {
                failed.add(link);
                link.stop();
                LOG.error("broker {}: a replication link failed to follow ownership; stopped it: {}", index,
                        e.toString(), e);
            }
        }
    }

    /** Whether a link of {@code topic} still hands segment {@code segment} over. */
    public boolean handingOver(String topic, long segment) {
        return links.stream().anyMatch(l -> l.topic().equals(topic) && l.handingOver(segment));
    }

    /** Stops every link at once; the cursors keep what was acknowledged. */
    public void stopReplicating() {
        links.forEach(ReplicationLink::stop);
    }

    public boolean caughtUp() {
        return links.stream().allMatch(ReplicationLink::caughtUp);
    }

    public List<ReplicatorStatus> replicators() {
        return links.stream().flatMap(l -> l.status().stream()).toList();
    }

    /** Drops every connection into this broker and stops answering (what a crash does to peers). */
    public void stopIngest() {
        ingest.stop();
    }

    /** Listens again on the port it had. */
    public void restartIngest() {
        if (!ingest.isRunning()) {
            ingest.start(Objects.requireNonNull(host, "never listened"), port);
        }
    }
}
