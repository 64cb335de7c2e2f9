package io.verbatim.metadatalog.server;

import io.verbatim.metadatalog.proto.ListenerDelegationProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A metadata log group's configuration: its voters, its listeners and the admin's listener delegation. What
 * a group starts from ({@link RaftServer.Builder#group}), what a member holds ({@link MemberStatus#group()}) and
 * what a change proposes ({@link RaftServer#updateGroup}).
 *
 * @param voters the voters, in the configuration's order
 * @param listeners the listeners, in the configuration's order
 * @param delegations which voter feeds which listener (listener -> follower), by listener; a listener not
 *     named is fed by the leader
 */
public record Group(List<Member> voters, List<Member> listeners, Map<String, String> delegations) {

    public Group {
        voters = List.copyOf(voters);
        listeners = List.copyOf(listeners);
        delegations = Collections.unmodifiableMap(new TreeMap<>(delegations));
    }

    /**
     * One member of the group.
     *
     * @param id its member id
     * @param address {@code host:port} of its Raft transport ({@code ""}: none, an in-process network)
     */
    public record Member(String id, String address) {
        public Member {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(address, "address");
        }
    }

    /** Voters and listeners by id only (an in-process network), no delegation. */
    public static Group of(List<String> voters, List<String> listeners) {
        return new Group(voters.stream().map(v -> new Member(v, "")).toList(),
                listeners.stream().map(l -> new Member(l, "")).toList(), Map.of());
    }

    /** This group with its delegations replaced by {@code assignment} (listener -> follower). */
    public Group withDelegations(Map<String, String> assignment) {
        return new Group(voters, listeners, assignment);
    }

    /** The voters' ids. */
    public List<String> voterIds() {
        return voters.stream().map(Member::id).toList();
    }

    /** The listeners' ids. */
    public List<String> listenerIds() {
        return listeners.stream().map(Member::id).toList();
    }

    static Group of(RaftConfigurationProto conf) {
        Map<String, String> delegations = new TreeMap<>();
        conf.getDelegationsList().forEach(d -> delegations.putIfAbsent(d.getListener(), d.getFollower()));
        return new Group(members(conf.getPeersList()), members(conf.getListenersList()), delegations);
    }

    private static List<Member> members(List<RaftPeerProto> peers) {
        return peers.stream().map(p -> new Member(p.getId(), p.getAddress())).toList();
    }

    /** The configuration that starts a group. */
    RaftConfigurationProto toProto() {
        return onto(RaftConfigurationProto.getDefaultInstance());
    }

    /**
     * {@code base} changed to this group: its voters and listeners kept as they are (with what else their
     * entries carry) unless this group names others, its delegations this group's, by listener.
     */
    RaftConfigurationProto onto(RaftConfigurationProto base) {
        RaftConfigurationProto.Builder b = base.toBuilder();
        if (!members(base.getPeersList()).equals(voters)) {
            b.clearPeers();
            voters.forEach(m -> b.addPeers(proto(m)));
        }
        if (!members(base.getListenersList()).equals(listeners)) {
            b.clearListeners();
            listeners.forEach(m -> b.addListeners(proto(m)));
        }
        b.clearDelegations();
        delegations.forEach((listener, follower) -> b.addDelegations(
                ListenerDelegationProto.newBuilder().setListener(listener).setFollower(follower)));
        return b.build();
    }

    private static RaftPeerProto proto(Member m) {
        return RaftPeerProto.newBuilder().setId(m.id()).setAddress(m.address()).build();
    }
}
