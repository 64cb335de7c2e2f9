package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ControllerReplica;
import io.verbatim.config.MemberCredential;
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
 * replica (a voter) or the brokers' process (the listener {@value ControllerReplica#BROKERS}). The group is
 * the cluster's controller replicas as voters and its brokers' process as the listener, the same in every
 * process (what the configuration names). Each member proves who it is with a key derived from a secret of its
 * own ({@code clusters[].controllers[].secret}, {@code clusters[].brokersSecret}), and knows the others by
 * their verifying keys ({@link MemberKeys}): no member can speak as another, and the brokers' listener never
 * as a voter. The transport runs TLS with the cluster's certificate when enabled.
 */
public final class NetworkedMember {
    private static final Logger LOG = Loggers.getLogger(NetworkedMember.class);
    private NetworkedMember() {
    }

    /** The group every member of {@code cluster} starts from (the configuration at index 0). */
    static Group group(ClusterConfig cluster) {
        return new Group(cluster.controllers().stream().map(c -> new Group.Member(c.id(), c.raftAddress())).toList(),
                List.of(new Group.Member(ControllerReplica.BROKERS, brokersAddress(cluster))), cluster.delegations());
    }

    private static String brokersAddress(ClusterConfig cluster) {
        String host = cluster.addresses().advertisedAddress();
        return (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + cluster.addresses().raftPort();
    }

    /** A started member, with what its meters read. */
    public record Started(String member, RaftServer server, NettyRaftTransport transport, RaftStorage storage) {
        /**
         * Its state, its transport's and (on disk) its storage's meters, tagged with the member; on a voter,
         * the feed of each listener of {@code cluster} while it leads. The subscriptions end when the
         * returned disposable is disposed.
         */
        Disposable bindTo(MeterRegistry registry, ClusterConfig cluster) {
            new RaftTransportMetricsBinder(transport.metrics()).bindTo(registry);
            StorageMetricsBinder.of(storage).bindTo(registry);
            Disposable.Composite meters = Disposables.composite(MetadataLogMetrics.bind(server, member, registry));
            if (!member.equals(ControllerReplica.BROKERS)) {
                meters.add(MetadataLogMetrics.bindListeners(this::leading, server.memberStatuses(), group(cluster),
                        registry));
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
        String bindHost = cluster.addresses().bindAddress();
        int bindPort = cluster.addresses().raftPort();
        for (ControllerReplica c : cluster.controllers()) {
            if (c.id().equals(member)) {
                bindHost = c.bindAddress();
                bindPort = c.raftPort();
            } else {
                peers.put(c.id(), c.raftAddress());
            }
        }
        if (!member.equals(ControllerReplica.BROKERS)) {
            peers.put(ControllerReplica.BROKERS, brokersAddress(cluster));
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
            Group group = group(cluster);
            RaftServer server = MetadataLogOptions.member(cluster.name(), member, config.metadataLog(), group)
                    .storage(storage).transport(net).machine(machine).scheduler(thread)
                    .seed((cluster.name() + "/" + member + "/" + System.nanoTime()).hashCode()).start();
            MetadataLogOptions.warnOnDrift(cluster.name(), group, server);
            return new Started(member, server, net, storage);
        } catch (RuntimeException e) {
            net.close();
            storage.close();
            throw e;
        }
    }

    /**
     * Member {@code member}'s keys: its own signing key, every controller replica's verifying key as a voter's,
     * the brokers' as the listener's.
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
        return keys.withListener(ControllerReplica.BROKERS, of(credentials, ControllerReplica.BROKERS).verifying());
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
