package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.config.BrokerMember;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ControllerReplica;
import io.verbatim.config.MemberCredential;
import io.verbatim.config.MetadataLogConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.server.StateMachine;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.metadatalog.storage.StorageMetricsBinder;
import io.verbatim.metadatalog.transport.NettyRaftTransport;
import io.verbatim.metadatalog.transport.RaftTransportMetricsBinder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One member of a cluster's metadata log in this process, the others in theirs, over TCP: a controller
 * replica (a voter) or a broker process (a listener: a broker member, {@code clusters[].brokerMembers}, or the
 * one brokers process {@value ControllerReplica#BROKERS}). The group is the cluster's controller replicas as
 * voters and its broker members as listeners, the same in every process (what the configuration names). Each
 * member proves who it is with a key derived from a secret of its own ({@code clusters[].controllers[].secret},
 * {@code clusters[].brokerMembers[].secret} or {@code clusters[].brokersSecret}), and knows the others by their
 * verifying keys ({@link MemberKeys}): no member can speak as another, and a broker's listener never as a voter.
 * The transport runs TLS with the cluster's certificate when enabled.
 */
public final class NetworkedMember {
    private static final Logger LOG = Loggers.getLogger(NetworkedMember.class);
    private NetworkedMember() {
    }

    /**
     * The group every member of {@code cluster} starts from (the configuration at index 0): its controller
     * replicas, its broker members and their delegation ({@link Delegations#initial}).
     */
    static Group group(ClusterConfig cluster, MetadataLogConfig log) {
        return new Group(cluster.controllers().stream().map(c -> new Group.Member(c.id(), c.raftAddress())).toList(),
                cluster.brokerMembers().stream().map(m -> new Group.Member(m.id(), m.raftAddress())).toList(),
                Delegations.initial(cluster, log));
    }

    /**
     * A started member, with what its meters read.
     *
     * @param group the group it started from
     */
    public record Started(String member, RaftServer server, NettyRaftTransport transport, RaftStorage storage,
            Group group) {
        /**
         * Its state, its transport's and (on disk) its storage's meters, tagged with the member; on a voter,
         * the feed of each listener of its group while it leads. The subscriptions end when the returned
         * disposable is disposed.
         */
        Disposable bindTo(MeterRegistry registry) {
            new RaftTransportMetricsBinder(transport.metrics()).bindTo(registry);
            StorageMetricsBinder.of(storage).bindTo(registry);
            Disposable.Composite meters = Disposables.composite(MetadataLogMetrics.bind(server, member, registry));
            if (group.voterIds().contains(member)) {
                meters.add(MetadataLogMetrics.bindListeners(this::leading, server.memberStatuses(), group, registry));
            }
            return meters;
        }

        /** Its status while it leads. */
        Optional<MemberStatus> leading() {
            return Optional.of(server.memberStatus()).filter(MemberStatus::leads);
        }
    }

    /**
     * Starts {@code member} of {@code cluster}'s metadata log on {@code thread}, its log on disk under
     * {@code <dataDir>/metadata/<member>} (in memory without a data directory).
     */
    public static Started start(VerbatimConfig config, ClusterConfig cluster, String member, Optional<Path> dataDir,
            StateMachine machine, Scheduler thread) {
        Map<String, String> peers = new LinkedHashMap<>();
        Optional<BrokerMember> broker = cluster.brokerMember(member);
        Optional<ControllerReplica> voter = cluster.controller(member);
        if (broker.isEmpty() && voter.isEmpty()) {
            throw new IllegalArgumentException("cluster " + cluster.name() + " has no member '" + member + "' (it has "
                    + cluster.metadataVoters() + " and " + cluster.metadataListeners() + ")");
        }
        String bindHost = broker.map(BrokerMember::bindAddress).orElseGet(() -> voter.orElseThrow().bindAddress());
        int bindPort = broker.map(BrokerMember::raftPort).orElseGet(() -> voter.orElseThrow().raftPort());
        for (ControllerReplica c : cluster.controllers()) {
            if (!c.id().equals(member)) {
                peers.put(c.id(), c.raftAddress());
            }
        }
        if (voter.isPresent()) {
            // a voter feeds every listener (as the leader, or as a delegate); a listener hears from voters only
            cluster.brokerMembers().forEach(m -> peers.put(m.id(), m.raftAddress()));
        }
        int index = config.clusters().indexOf(cluster);
        evenVoters(index, cluster).ifPresent(LOG::warn);
        MemberKeys keys = keys(config, cluster, member);
        LOG.info("{}/{}: proves who it is on the metadata log with verifying key {} (what the other members' hosts "
                + "may be given instead of its secret)", cluster.name(), member, keys.own().verifying());
        NettyRaftTransport.Builder transport = NettyRaftTransport.builder(cluster.name(), keys)
                .bind(bindHost, bindPort).peers(peers).limits(config.network())
                // its inbound and timers on the member's own thread (where every step runs anyway), never on a
                // shared scheduler other work of the process could hold up
                .scheduler(thread)
                // every member of the cluster presents the cluster's certificate: its name is the cluster's
                .certificateNameCheck(false);
        config.security().tls(cluster.name()).ifPresent(transport::tls);
        RaftStorage storage = MetadataLogOptions.storage(dataDir, member);
        NettyRaftTransport net;
        try {
            net = transport.start();
        } catch (RuntimeException e) {
            storage.close();
            throw e;
        }
        try {
            Group group = group(cluster, config.metadataLog());
            RaftServer server = MetadataLogOptions.member(cluster.name(), member, config.metadataLog(), group)
                    .storage(storage).transport(net).machine(machine).scheduler(thread)
                    .seed((cluster.name() + "/" + member + "/" + System.nanoTime()).hashCode()).start();
            MetadataLogOptions.warnOnDrift(cluster.name(), group, server);
            return new Started(member, server, net, storage, group);
        } catch (RuntimeException e) {
            net.close();
            storage.close();
            throw e;
        }
    }

    /**
     * Member {@code member}'s keys: its own signing key, every controller replica's verifying key as a voter's,
     * every broker member's as a listener's.
     *
     * @throws io.verbatim.config.ConfigException naming the key of a member's credential missing, or of
     *     {@code member}'s own given as a verifying key
     */
    static MemberKeys keys(VerbatimConfig config, ClusterConfig cluster, String member) {
        Map<String, MemberCredential> credentials = config.security().members(cluster, member);
        MemberKeys keys = MemberKeys.of(member, of(credentials, member).signing().orElseThrow());
        for (ControllerReplica c : cluster.controllers()) {
            keys = keys.withVoter(c.id(), of(credentials, c.id()).verifying());
        }
        for (BrokerMember m : cluster.brokerMembers()) {
            keys = keys.withListener(m.id(), of(credentials, m.id()).verifying());
        }
        return keys;
    }

    private static MemberCredential of(Map<String, MemberCredential> credentials, String member) {
        return Objects.requireNonNull(credentials.get(member), "every member's credential, checked");
    }

    /**
     * A warning for a cluster whose controller replicas are even in number: a majority of {@code 2k} voters is
     * {@code k + 1}, so they survive {@code k - 1} failures, no more than {@code 2k - 1} voters do.
     */
    public static Optional<String> evenVoters(int index, ClusterConfig cluster) {
        int n = cluster.controllers().size();
        if (n == 0 || n % 2 == 1) {
            return Optional.empty();
        }
        return Optional.of("clusters[" + index + "].controllers names " + n + " controller replicas: a majority of them is "
                + (n / 2 + 1) + ", so the metadata log survives " + (n / 2 - 1) + " failure(s), no more than with "
                + (n - 1) + " (" + (n + 1) + " would survive " + n / 2 + "); name an odd number");
    }

    /** A member's own thread. */
    public static Scheduler thread(String cluster, String member) {
        return Schedulers.newSingle("raft-" + cluster + "-" + member, true);
    }
}
