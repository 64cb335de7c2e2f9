package io.verbatim.runtime.broker;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.BudgetMetricsBinder;
import io.verbatim.budget.InFlightBudget;
import io.verbatim.config.Addresses;
import io.verbatim.config.BrokerMember;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.pipeline.ExchangeGate;
import io.verbatim.pipeline.PipelineMetricsBinder;
import io.verbatim.pipeline.RemoteCluster;
import io.verbatim.pipeline.ReplicationLink;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.ReplicatorStatus;
import io.verbatim.pulsar.PulsarRemote;
import io.verbatim.runtime.storage.ClusterStorage;
import io.verbatim.runtime.storage.TopicStorage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The brokers of one cluster in this process: each with its ingest endpoint, its slow-path budget and its in-flight
 * budget, running the replicators of the segments it owns toward every peer; the producer and the PIP-486
 * subscriptions on the cluster's topics, their load per segment, and the brokers' report to a controller leader in a
 * process of its own.
 */
public final class Brokers implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(Brokers.class);
    /** Bytes in flight on one broker's replicators (its {@link InFlightBudget}). */
    public static final String IN_FLIGHT_BYTES = "verbatim.replication.inflight.bytes";
    /** Broker URLs a peer's layouts named that are not configured for it (ignored), per peer and topic. */
    public static final String IGNORED_BROKER_URLS = "verbatim.replication.brokers.ignored";

    private final String name;
    private final VerbatimConfig config;
    private final ClusterConfig self;
    private final BrokerMember process;
    private final ClusterStorage storage;
    private final NetServer net;
    private final NetClient client;
    private final MeterRegistry registry;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final BooleanSupplier stopping;
    private final List<Broker> brokers = new ArrayList<>();
    private final Map<String, LoadTracker> load = new ConcurrentHashMap<>();
    private final Map<String, List<Subscription>> subscriptions = new ConcurrentHashMap<>();
    /** Replication counters per topic and remote, shared by every broker's replicators. */
    private final Map<String, Map<String, ReplicatorMetrics>> replication = new ConcurrentHashMap<>();
    private final List<NetworkRemote> remotes = new ArrayList<>();
    private final List<Disposable> pulsarRemotes = new ArrayList<>();
    /** What the last report said per topic (load aside): a report leaves out a topic that did not change. */
    private final Map<String, BrokerReport.Topic> reportedLast = new ConcurrentHashMap<>();
    private final Disposable.Composite open = Disposables.composite();
    /** Each segment id whose hand-over ended, from every link (links end theirs on several threads). */
    private final Sinks.Many<Long> handedOver = Sinks.many().multicast().directBestEffort();
    /**
     * What this process acts on of the cluster's segments: all of them unless the cluster has many processes; then
     * nothing until {@link #ownedBy} (a subscription opened before, at the admin port, must not read them all).
     */
    private volatile SegmentOwnership ownership;
    /** Each ownership given, the last one replayed: what {@link #acting} follows. */
    private final Sinks.Many<SegmentOwnership> ownerships = Sinks.many().replay().latest();
    /** What subscriptions and the storage follow: the ownership of now, whichever it is. */
    private final SegmentOwnership acting = new SegmentOwnership() {
        @Override
        public boolean owns(String topic, long segment) {
            return ownership.owns(topic, segment);
        }

        @Override
        public boolean handsOver(String topic, long segment) {
            return ownership.handsOver(topic, segment);
        }

        @Override
        public Flux<Long> changes() {
            // the changes subscribed first, then one tick: a change during the first reconsidering is not missed
            return ownerships.asFlux().switchMap(o -> Flux.merge(o.changes(), Mono.just(0L)));
        }
    };

    /**
     * @param process the broker process this is: its ports (one broker per ingest port)
     * @param stopping whether the node is stopping (its report then offers nothing more to prune)
     * @param shared whether the cluster's segments are shared by many broker processes: then this one acts on none
     *        until {@link #ownedBy}
     */
    public Brokers(VerbatimConfig config, String name, BrokerMember process, ClusterStorage storage, NetServer net,
            NetClient client, MeterRegistry registry, Scheduler timer, Scheduler cpu, BooleanSupplier stopping,
            boolean shared) {
        this.name = name;
        this.config = config;
        this.self = config.cluster(name);
        this.process = process;
        this.storage = storage;
        this.net = net;
        this.client = client;
        this.registry = registry;
        this.timer = timer;
        this.cpu = cpu;
        this.stopping = stopping;
        this.ownership = shared ? SegmentOwnership.NONE : SegmentOwnership.ALL;
        ownerships.tryEmitNext(ownership);
    }

    /** Counts {@code topic}'s load from now on (an open topic); its storage asks only about what this process acts on. */
    public void track(String topic) {
        load.put(topic, new LoadTracker());
        storage.of(topic).actsOn(id -> acting.owns(topic, id) || acting.handsOver(topic, id));
    }

    /**
     * Starts every broker's ingest endpoint on its configured port; {@code key} names where the process's ports are
     * configured in errors.
     */
    public synchronized void start(String key, List<String> peers) {
        Addresses addresses = process.addresses();
        for (int i = 0; i < process.brokers(); i++) {
            BrokerBudget budget = new BrokerBudget(config.slowPath(), timer);
            new BudgetMetricsBinder(budget, Tags.of("broker", Integer.toString(i))).bindTo(registry);
            IngestServer ingest = new IngestServer(name, i, t -> Optional.ofNullable(storage.find(t)), this::layoutUrls,
                    net, Set.copyOf(peers),
                    registry, (topic, segment, messages, bytes) -> load(topic).produced(segment, messages, bytes));
            // one in-flight budget per broker: the replicators of all its topics and remotes share it
            InFlightBudget inFlight = InFlightBudget.of(config.replication().brokerInFlightBytes());
            Gauge.builder(IN_FLIGHT_BYTES, inFlight, InFlightBudget::used)
                    .tags(Tags.of("broker", Integer.toString(i))).baseUnit("bytes")
                    .description("bytes of entries the broker's replicators read and the remotes have not acknowledged"
                            + " (each entry with 1 KiB of bookkeeping), out of replication.brokerInFlightBytes")
                    .strongReference(true).register(registry);
            Broker broker = new Broker(i, process.brokers(), budget, inFlight, ingest);
            brokers.add(broker); // before it binds: a failed start stops what did start
            int port = addresses.brokerPorts().get(i);
            Ports.bind(key + ".brokerPorts[" + i + "]", addresses.bindAddress(), port, () -> {
                broker.listen(addresses.bindAddress(), port);
                return broker;
            });
        }
    }

    /**
     * Acts only on the segments {@code value} selects from now on, and asks again each time it changes (a lost
     * segment's replicators stop before the change returns). Before {@link #replicateTo}.
     */
    public synchronized void ownedBy(SegmentOwnership value) {
        ownership = value;
        ownerships.tryEmitNext(value);
        value.handOvers((topic, segment) -> brokers.stream().anyMatch(b -> b.handingOver(topic, segment))
                || subscriptions.getOrDefault(topic, List.of()).stream().anyMatch(s -> s.handingOver(segment)),
                handedOver.asFlux());
        open.add(value.changes().subscribe(v -> brokers.forEach(Broker::reconsider),
                e -> LOG.error("{}: no longer following ownership: {}", name, e.toString())));
    }

    /** What this process acts on. */
    public SegmentOwnership ownership() {
        return ownership;
    }

    /**
     * Replicates every open topic into every peer's brokers (or, on Pulsar, into the peer's Pulsar, the layouts still
     * from its brokers), through every broker, while {@code gate} says the peer takes part in the exchange.
     */
    public synchronized void replicateTo(Map<String, ClusterUrls> peers, List<String> peerOrder, ExchangeGate gate) {
        ReplicatorConfig replicator = config.replication().forCluster(name);
        Heartbeat heartbeat = new Heartbeat(config.replication().pingInterval(), config.replication().pingTimeout());
        for (String topic : storage.topics()) {
            TopicStorage local = storage.of(topic);
            for (String peer : peerOrder) {
                ClusterUrls address = peers.get(peer);
                if (address == null) {
                    throw new IllegalArgumentException("no address for peer " + peer + " of " + name);
                }
                ReplicatorMetrics counters = new ReplicatorMetrics();
                replication.computeIfAbsent(topic, t -> new ConcurrentHashMap<>()).put(peer, counters);
                NetworkRemote network = new NetworkRemote(peer, topic, address.brokerUrls(), client, config.rtt(),
                        heartbeat, timer);
                remotes.add(network);
                FunctionCounter.builder(IGNORED_BROKER_URLS, network, NetworkRemote::ignoredBrokerUrls)
                        .tags(Tags.of("remote_cluster", peer, "topic", topic))
                        .description("broker URLs the remote's layouts named that are not configured for it: never called")
                        .register(registry);
                RemoteCluster remote = network;
                if (storage.pulsar().isPresent()) {
                    // entries go into the peer's Pulsar; its layouts still come from its brokers' layout stream
                    PulsarRemote onPulsar = new PulsarRemote(peer, storage.pulsar().get().of(peer), topic,
                            network.layouts());
                    pulsarRemotes.add(onPulsar);
                    remote = onPulsar;
                }
                RemoteCluster into = remote;
                List<ReplicationLink> links = new ArrayList<>();
                SegmentOwnership owned = ownership;
                for (Broker broker : brokers) {
                    ReplicationLink link = broker.replicate(() -> ReplicationLink.builder().local(local).remote(into)
                            .config(replicator).exchangeGate(gate).timer(timer).cpu(cpu).metrics(counters)
                            .stallAfter(config.replication().stallAfter()), s -> owned.owns(topic, s.id()),
                            s -> owned.handsOver(topic, s.id()));
                    open.add(link.handedOver().subscribe(id -> handedOver.emitNext(id,
                            Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)))));
                    links.add(link);
                }
                new PipelineMetricsBinder(counters, Tags.of("remote_cluster", peer, "topic", topic),
                        () -> storage.backlog(topic, peer).values().stream().mapToLong(Long::longValue).sum(),
                        () -> links.stream().flatMap(l -> l.status().stream()).toList())
                        .bindTo(registry);
            }
        }
    }

    /** The load of {@code topic}, an open topic. */
    public LoadTracker load(String topic) {
        return Objects.requireNonNull(load.get(topic), topic);
    }

    /** The load of {@code topic}, or null when it is not open. */
    public @Nullable LoadTracker loadOrNull(String topic) {
        return load.get(topic);
    }

    /** This process's brokers' ingest URLs as peers reach them (the advertised address), in broker order. */
    public List<String> urls() {
        return brokers.stream().map(b -> process.addresses().advertisedUrl(net.scheme(), b.port())).toList();
    }

    /**
     * The cluster's ingest URLs its layout records name: this process's ({@link #urls}); with several broker
     * members (on Pulsar), every configured member's, in the file's order (peers take the layout stream from any,
     * and call only the URLs their own file names for the cluster).
     */
    List<String> layoutUrls() {
        if (self.brokerMembers().size() > 1) {
            return ClusterUrls.ingestUrls(self, net.scheme());
        }
        return urls();
    }

    public Producer producer(String topic, Compression codec) {
        return new Producer(storage.of(topic), load(topic), codec);
    }

    /** A PIP-486 subscription of {@code topic} to set up (see {@link Subscription.Builder}). */
    public Subscription.Builder subscription(String topic, String subscription) {
        storage.of(topic); // an unknown topic is refused here
        return new Subscription.Builder(subscription, config.subscriptions(), options -> open(topic, options));
    }

    private Subscription open(String topic, Subscription.Builder options) {
        List<Subscription> opened = subscriptions.computeIfAbsent(topic, t -> new CopyOnWriteArrayList<>());
        Subscription s;
        synchronized (opened) {
            if (opened.stream().anyMatch(o -> o.name().equals(options.name()) && !o.isDisposed())) {
                throw new IllegalStateException("subscription '" + options.name() + "' of topic " + topic
                        + " is open already on cluster " + name + " (one per name: they would share a cursor)");
            }
            s = new Subscription(storage.of(topic), load(topic), cpu, acting, options);
            opened.add(s);
        }
        Disposable ends = s.handedOver().subscribe(id -> handedOver.emitNext(id,
                Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1))));
        SubscriptionMetricsBinder metrics = new SubscriptionMetricsBinder(s, Tags.of("topic", topic));
        metrics.bindTo(registry);
        open.add(s);
        open.add(ends);
        s.onDispose(() -> {
            metrics.unbindFrom(registry);
            opened.remove(s);
            open.remove(s);
            open.remove(ends);
            ends.dispose();
        });
        return s;
    }

    /** How many consumers the topic's largest open subscription has (what the policy splits for). */
    public int consumers(String topic) {
        return subscriptions.getOrDefault(topic, List.of()).stream().filter(s -> !s.isDisposed())
                .mapToInt(Subscription::consumers).max().orElse(0);
    }

    /** What the brokers tell the controller leader (a cluster with controller replicas of their own). */
    public BrokerReport report(boolean whole) {
        Map<String, BrokerReport.Topic> out = new LinkedHashMap<>();
        for (String topic : storage.topics()) {
            BrokerReport.Topic now = new BrokerReport.Topic(load(topic).drain(), consumers(topic),
                    config.storage().pruneSealed() && !stopping.getAsBoolean() ? storage.prunable(topic) : List.of());
            BrokerReport.Topic before = reportedLast.put(topic, new BrokerReport.Topic(Map.of(), now.consumers(),
                    now.prunable()));
            if (whole || !now.load().isEmpty() || before == null || before.consumers() != now.consumers()
                    || !before.prunable().equals(now.prunable())) {
                out.put(topic, now);
            }
        }
        return new BrokerReport(out);
    }

    /** A report the controller leader did not take: its load counts again in the next one. */
    public void untaken(BrokerReport report) {
        report.topics().forEach((topic, t) -> {
            LoadTracker tracker = load.get(topic);
            if (tracker != null) {
                tracker.add(t.load());
            }
        });
    }

    /** Replication counters toward {@code remote} for {@code topic}, summed over every broker. */
    public ReplicatorMetrics replication(String topic, String remote) {
        return replication.getOrDefault(topic, Map.of()).getOrDefault(remote, new ReplicatorMetrics());
    }

    /** Per remote, the entries replicated verbatim and re-batched so far, over every topic. */
    public Map<String, long[]> replicatedTotals() {
        Map<String, long[]> out = new TreeMap<>();
        replication.forEach((topic, byRemote) -> byRemote.forEach((remote, m) -> {
            long[] totals = out.computeIfAbsent(remote, r -> new long[2]);
            totals[0] += m.verbatimEntries();
            totals[1] += m.rebatchedEntries();
        }));
        return out;
    }

    /** True when every replication cursor of every topic toward every peer has nothing left. */
    public boolean caughtUp() {
        return brokers.stream().allMatch(Broker::caughtUp);
    }

    /** Every replicator of every topic toward every peer, as its link supervises it. */
    public List<ReplicatorStatus> replicators() {
        return brokers.stream().flatMap(b -> b.replicators().stream()).toList();
    }

    /** Stops every broker's ingest endpoint: connections into this cluster drop, new ones are refused. */
    public synchronized void stopIngest() {
        brokers.forEach(Broker::stopIngest);
    }

    /** Restarts the ingest endpoints on their ports. */
    public synchronized void restartIngest() {
        brokers.forEach(Broker::restartIngest);
    }

    /** Stops replicating: the replication links, the Pulsar remotes and the peers' layout streams. */
    public synchronized void disconnect() {
        brokers.forEach(Broker::stopReplicating);
        pulsarRemotes.forEach(Disposable::dispose);
        remotes.forEach(NetworkRemote::close);
    }

    /** Closes the open subscriptions. */
    @Override
    public void close() {
        open.dispose();
    }
}
