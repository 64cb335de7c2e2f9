package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.MetadataLogConfig;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.LeaderLayoutStore;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.metadatalog.transport.MemoryNetwork;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A cluster's metadata log in this process: three controller replicas (the voters {@code c1..c3}) and one
 * listener per broker ({@code b0..}), on an in-process network, each on a thread of its own and, with a
 * data directory, on disk under {@code <dataDir>/metadata/<member>}. The controller writes through
 * whichever replica leads; the brokers watch layouts from their own listener's replica. With
 * {@code metadataLog.enabled}, the listeners the cluster's {@code delegations} assign are fed by those
 * followers (the assignment starts a new group; {@link #assign} changes it on the leader).
 */
public final class LocalMetadataLog implements DelegationApi.Log, AutoCloseable {
    static final List<String> VOTERS = ClusterConfig.IN_PROCESS_VOTERS;

    private final String cluster;
    private final List<String> listeners;
    private final Optional<Path> dataDir;
    private final MetadataLogConfig log;
    private final MemoryNetwork network;
    private final Scheduler networkThread;
    private final Group configuration;
    private final Map<String, RaftServer> members = new LinkedHashMap<>();
    private final Map<String, LayoutRegister> registers = new LinkedHashMap<>();
    private final Map<String, RaftLayoutStore> stores = new LinkedHashMap<>();
    private final Map<String, Scheduler> threads = new LinkedHashMap<>();
    private final LeaderLayoutStore store;
    private final Disposable.Composite meters = Disposables.composite();

    private LocalMetadataLog(ClusterConfig cluster, MetadataLogConfig log, Optional<Path> dataDir, Scheduler timer) {
        this.cluster = cluster.name();
        this.dataDir = dataDir;
        this.log = log;
        this.listeners = cluster.metadataListeners();
        // deliveries on a thread of the group's own: never held up by other work on a shared scheduler
        this.networkThread = Schedulers.newSingle("raft-" + cluster + "-network", true);
        this.network = new MemoryNetwork(this.cluster, networkThread, new SplittableRandom(this.cluster.hashCode()));
        this.configuration = Group.of(VOTERS, listeners).withDelegations(cluster.delegations());
        for (String member : memberIds()) {
            start(member);
        }
        // The brokers watch from the first broker's listener (all brokers of this process share its storage).
        String watcher = listeners.isEmpty() ? VOTERS.get(0) : listeners.get(0);
        this.store = new LeaderLayoutStore(stores, this::leader, watcher, Duration.ofSeconds(30), timer);
    }

    /** Starts the group of {@code cluster} with a listener per broker, its delegations the cluster's. */
    public static LocalMetadataLog start(ClusterConfig cluster, MetadataLogConfig log, Optional<Path> dataDir, Scheduler timer) {
        return new LocalMetadataLog(cluster, log, dataDir, timer);
    }

    private List<String> memberIds() {
        List<String> all = new ArrayList<>(VOTERS);
        all.addAll(listeners);
        return all;
    }

    private synchronized void start(String member) {
        LayoutRegister register = new LayoutRegister();
        RaftStorage storage = MetadataLogOptions.storage(dataDir, member);
        Scheduler thread = Schedulers.newSingle("raft-" + cluster + "-" + member, true);
        try {
            RaftServer server = MetadataLogOptions.member(cluster, member, log, configuration).storage(storage)
                    .transport(network.join(member)).machine(register).scheduler(thread)
                    .seed((cluster + "/" + member).hashCode()).start();
            MetadataLogOptions.warnOnDrift(cluster, configuration, server);
            members.put(member, server);
            registers.put(member, register);
            stores.put(member, new RaftLayoutStore(server, register));
            threads.put(member, thread);
        } catch (RuntimeException e) {
            thread.dispose();
            storage.close();
            throw e;
        }
    }

    /**
     * Every member's state as gauges (see {@link MetadataLogMetrics}), tagged with the member, and each
     * listener's feed as the leader sees it.
     */
    public synchronized void bindTo(MeterRegistry registry) {
        members.forEach((member, server) -> meters.add(MetadataLogMetrics.bind(server, member, registry)));
        meters.add(MetadataLogMetrics.bindListeners(this::leading,
                Flux.merge(currentMembers().stream().map(RaftServer::memberStatuses).toList()), configuration, registry));
    }

    @Override
    public synchronized Optional<MemberStatus> leading() {
        return leaderServer().map(RaftServer::memberStatus).filter(MemberStatus::leads);
    }

    @Override
    public Mono<Void> assign(Map<String, String> assignment) {
        return Mono.defer(() -> leaderServer().map(l -> Delegations.propose(l, assignment, log))
                .orElseGet(() -> Mono.error(new Delegations.Unavailable("no member of " + cluster
                        + "'s metadata log leads now"))));
    }

    private synchronized Optional<RaftServer> leaderServer() {
        return leader().flatMap(m -> Optional.ofNullable(members.get(m)));
    }

    /** The layout store the controller writes through and the brokers watch. */
    public LayoutStore store() {
        return store;
    }

    /** The member that leads the highest term (a cut-off leader may not know it was deposed), if any. */
    public synchronized Optional<String> leader() {
        return members.values().stream().map(RaftServer::memberStatus).filter(MemberStatus::leads)
                .max(Comparator.comparingLong(MemberStatus::term)).map(MemberStatus::memberId);
    }

    /** Each leader as it takes over, the first one included: one per term that had a leader, in term order. */
    public Flux<String> leaders() {
        return Flux.merge(currentMembers().stream().map(RaftServer::memberStatuses).toList())
                .filter(MemberStatus::leads)
                .scan((held, next) -> next.term() > held.term() ? next : held)
                .distinctUntilChanged(MemberStatus::term).map(MemberStatus::memberId);
    }

    private synchronized List<RaftServer> currentMembers() {
        return List.copyOf(members.values());
    }

    /** Every running member's state, voters first. */
    public synchronized List<MemberStatus> members() {
        return members.values().stream().map(RaftServer::memberStatus).toList();
    }

    /**
     * Stops {@code member} as a crash would (what it synced stays on disk, if it has one). It leaves the group
     * under the lock; it closes outside it, so the gauges and the store's leader lookups never wait on it.
     */
    public void kill(String member) {
        RaftServer server;
        Scheduler thread;
        synchronized (this) {
            server = members.remove(member);
            if (server == null) {
                throw new IllegalArgumentException(cluster + " has no running member " + member);
            }
            stores.remove(member);
            registers.remove(member);
            thread = threads.remove(member);
        }
        server.close();
        if (thread != null) {
            thread.dispose();
        }
    }

    @Override
    public void close() {
        List<RaftServer> servers;
        List<Scheduler> schedulers;
        synchronized (this) {
            meters.dispose();
            servers = List.copyOf(members.values());
            schedulers = List.copyOf(threads.values());
            members.clear();
            threads.clear();
        }
        servers.forEach(RaftServer::close);
        schedulers.forEach(Scheduler::dispose);
        networkThread.dispose();
    }
}
