package io.verbatim.runtime.controller;

import io.verbatim.config.ClusterConfig;
import io.verbatim.config.MetadataLogConfig;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.state.OwnershipLog;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.transport.NettyRaftTransport;
import io.verbatim.net.VerifyingKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A controller replica's view of the broker members the admin added at run time (issue 25), beside those the
 * file names: who may report to it (their verifying keys, from the metadata log's register), the transport's
 * keys and peers kept in step with the register (a new member is known once its registration is applied here),
 * and the leader's side of adding one ({@link MembersApi}).
 */
final class RegisteredMembers {
    private static final Logger LOG = Loggers.getLogger(RegisteredMembers.class);
    private final String cluster;
    private final ClusterConfig self;
    /** How the file's members' URLs are reached ({@code http} or {@code https}). */
    private final String scheme;
    private final MemberKeys configuredKeys;
    private final Map<String, String> configuredPeers;
    private final Map<String, VerifyingKey> configuredReporters;
    private volatile Map<String, VerifyingKey> reporters;
    /** The members added at run time the transport was last told of: id → its registration. */
    private Map<String, RegisteredMember> told = Map.of();

    /**
     * @param configuredKeys this replica's keys as the file gives them
     * @param configuredPeers its transport's peers as the file gives them
     * @param configuredReporters the file's broker members, by verifying key
     */
    RegisteredMembers(ClusterConfig self, String scheme, MemberKeys configuredKeys, Map<String, String> configuredPeers,
            Map<String, VerifyingKey> configuredReporters) {
        this.cluster = self.name();
        this.scheme = scheme;
        this.self = self;
        this.configuredKeys = configuredKeys;
        this.configuredPeers = Map.copyOf(configuredPeers);
        this.configuredReporters = Map.copyOf(configuredReporters);
        this.reporters = this.configuredReporters;
    }

    /** Who may report now: the file's members, and those added at run time that are not removed. */
    Map<String, VerifyingKey> reporters() {
        return reporters;
    }

    /** The members added at run time in {@code table}: registered with a key, not removed, not in the file. */
    private Map<String, RegisteredMember> added(OwnershipTable table) {
        Map<String, RegisteredMember> out = new TreeMap<>();
        for (RegisteredMember m : table.members().values()) {
            if (!m.verifyingKey().isEmpty() && m.state() != RegisteredMember.State.REMOVED
                    && self.brokerMember(m.id()).isEmpty() && self.controller(m.id()).isEmpty()) {
                out.put(m.id(), m);
            }
        }
        return out;
    }

    /**
     * The register as this replica applied it: the reporters and, when the members added at run time changed,
     * {@code transport}'s keys and peers (a removed member is hung up on).
     */
    synchronized void applied(OwnershipTable table, NettyRaftTransport transport) {
        try {
            Map<String, RegisteredMember> now = added(table);
            if (now.equals(told)) {
                return;
            }
            Map<String, VerifyingKey> callers = new LinkedHashMap<>(configuredReporters);
            MemberKeys keys = configuredKeys;
            Map<String, String> peers = new LinkedHashMap<>(configuredPeers);
            for (RegisteredMember m : now.values()) {
                // each on its own: one the transport cannot take is left out, the others are known
                try {
                    VerifyingKey key = VerifyingKey.parse(m.verifyingKey());
                    MemberKeys with = keys.withListener(m.id(), key);
                    Map<String, String> also = new LinkedHashMap<>(peers);
                    also.put(m.id(), m.raftAddress());
                    transport.updateKeys(with);
                    transport.updatePeers(also);
                    keys = with;
                    peers = also;
                    callers.put(m.id(), key);
                } catch (IllegalArgumentException e) {
                    LOG.error("{}: broker member {} added at run time is left out here (its key and peers as before): {}",
                            cluster, m.id(), e.getMessage());
                    transport.updateKeys(keys);
                    transport.updatePeers(peers);
                }
            }
            transport.updateKeys(keys); // a member removed is forgotten too
            transport.updatePeers(peers);
            reporters = Map.copyOf(callers);
            LOG.info("{}: broker members added at run time known here: {}", cluster, callers.keySet().stream()
                    .filter(id -> !configuredReporters.containsKey(id)).toList());
            told = now;
        } catch (RuntimeException e) { // never out of the watch: it would stop following the register for good
            LOG.error("{}: the broker members added at run time could not be followed: {}", cluster, e.toString(), e);
        }
    }

    /**
     * Registers {@code member} on {@code leader}'s log, then makes it a listener of the log fed by the voter with the
     * fewest listeners under the cap (or the leader, none having room); completes with the member as the endpoint
     * shows it once both are applied on the leader.
     */
    Mono<MembersApi.Member> add(RegisteredMember member, RaftServer leader, OwnershipLog log, MetadataLogConfig conf,
            boolean onPulsar) {
        return Mono.defer(() -> {
            if (!onPulsar) {
                return MembersApi.Members.oneProcess(MembersApi.Members.embedded(cluster)).add(member);
            }
            if (!self.namesBrokerMembers()) {
                throw new MembersApi.Conflict("cluster " + cluster + " names no brokerMembers in its file: its segments"
                        + " are not owned by members (name at least one, then add more here)");
            }
            // after a read barrier: what an earlier leader committed is applied here before it is checked
            return log.read().flatMap(table -> {
                refusal(member, table).ifPresent(why -> {
                    throw new MembersApi.Conflict(why);
                });
                // the same registration again continues one whose group change did not go through
                Mono<?> registered = table.member(member.id()).filter(member::equals).isPresent() ? Mono.empty()
                        : log.register(member);
                return registered.then(leader.updateGroup(group -> withListener(group, member, conf)))
                        .then(Mono.fromSupplier(() -> view(member.id(), log.local(), leader.memberStatus().group())
                                .orElseThrow()));
            });
        });
    }

    /**
     * Why {@code member} cannot be added: its id or its key in use (by a voter, a member the file names, or another
     * registration that is not removed; the same registration again is not refused).
     */
    private Optional<String> refusal(RegisteredMember member, OwnershipTable table) {
        if (self.controller(member.id()).isPresent()) {
            return Optional.of("member id " + member.id() + " is a controller replica of cluster " + cluster);
        }
        if (self.brokerMember(member.id()).isPresent()) {
            return Optional.of("member id " + member.id() + " is a broker member the file of cluster " + cluster
                    + " names already");
        }
        Optional<RegisteredMember> held = table.member(member.id());
        if (held.isPresent() && held.get().state() != RegisteredMember.State.REMOVED && !held.get().equals(member)) {
            return Optional.of("member id " + member.id() + " is registered already (" + held.get().state()
                    + ", raft " + held.get().raftAddress() + ")");
        }
        for (RegisteredMember m : table.members().values()) {
            if (!m.id().equals(member.id()) && m.verifyingKey().equals(member.verifyingKey())
                    && m.state() != RegisteredMember.State.REMOVED) {
                return Optional.of("member " + m.id() + " has the verifying key " + member.verifyingKey()
                        + " already: each member needs a secret of its own");
            }
        }
        if (configuredKeys.members().stream().anyMatch(id -> configuredKeys.keyOf(id).map(VerifyingKey::form)
                .filter(member.verifyingKey()::equals).isPresent())) {
            return Optional.of("a member the file names has the verifying key " + member.verifyingKey()
                    + " already: each member needs a secret of its own");
        }
        return Optional.empty();
    }

    /** {@code group} with {@code member} a listener, delegated to the voter with the fewest listeners under the cap. */
    static Group withListener(Group group, RegisteredMember member, MetadataLogConfig conf) {
        List<Group.Member> listeners = new ArrayList<>(group.listeners());
        listeners.removeIf(l -> l.id().equals(member.id())); // added again (after it was removed): its address now
        listeners.add(new Group.Member(member.id(), member.raftAddress()));
        Map<String, String> delegations = new TreeMap<>(group.delegations());
        if (conf.enabled() && !delegations.containsKey(member.id())) {
            Map<String, Integer> fed = new TreeMap<>();
            group.voterIds().forEach(v -> fed.put(v, 0));
            delegations.values().forEach(v -> fed.merge(v, 1, Integer::sum));
            fed.entrySet().stream().filter(e -> e.getValue() < conf.maxListenersPerFollower())
                    .min(Map.Entry.comparingByValue()).ifPresent(e -> delegations.put(member.id(), e.getKey()));
        }
        return new Group(group.voters(), listeners, delegations);
    }

    /** Every broker member: the file's, then those added at run time, with their state. */
    List<MembersApi.Member> list(OwnershipTable table, Group group) {
        List<String> ids = new ArrayList<>();
        self.brokerMembers().forEach(m -> ids.add(m.id()));
        table.members().keySet().stream().filter(id -> !ids.contains(id)).forEach(ids::add);
        return ids.stream().map(id -> view(id, table, group)).flatMap(Optional::stream).toList();
    }

    private Optional<MembersApi.Member> view(String id, OwnershipTable table, Group group) {
        boolean configured = self.brokerMember(id).isPresent();
        Optional<RegisteredMember> held = table.member(id);
        if (!configured && held.isEmpty()) {
            return Optional.empty();
        }
        String state = held.map(m -> m.state().name()).orElse("NOT_REPORTED");
        RegisteredMember m = held.orElse(RegisteredMember.configured(id, RegisteredMember.State.ACTIVE));
        String raft = configured ? self.brokerMember(id).orElseThrow().raftAddress() : m.raftAddress();
        String key = configured ? configuredKeys.keyOf(id).map(VerifyingKey::form).orElse("") : m.verifyingKey();
        // the file's members' URLs from the file (the log keeps those of members added at run time)
        String admin = configured ? self.brokerMember(id).orElseThrow().adminUrl(scheme) : m.adminUrl();
        String ingest = configured ? self.brokerMember(id).orElseThrow().ingestUrls(scheme).get(0) : m.ingestUrl();
        return Optional.of(new MembersApi.Member(id, state, configured, group.listenerIds().contains(id), raft,
                admin, ingest, key));
    }
}
