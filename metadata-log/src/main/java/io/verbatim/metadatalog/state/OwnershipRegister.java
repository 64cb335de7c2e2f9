package io.verbatim.metadatalog.state;

import io.verbatim.metadatalog.proto.Assign;
import io.verbatim.metadatalog.proto.BrokerMember;
import io.verbatim.metadatalog.proto.MemberChange;
import io.verbatim.metadatalog.proto.MemberState;
import io.verbatim.metadatalog.proto.Move;
import io.verbatim.metadatalog.proto.OwnerPhase;
import io.verbatim.metadatalog.proto.OwnershipChange;
import io.verbatim.metadatalog.proto.Release;
import io.verbatim.metadatalog.proto.SegmentOwnership;
import io.verbatim.metadatalog.proto.SegmentRef;
import io.verbatim.model.Layout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The ownership part of the layout register: which broker member owns each segment, and the members. Pure
 * and deterministic (no clock: leases are the leader's business, expiry arrives as a command), applied on
 * the member's driver thread; {@link #table()} is an immutable copy readable from any thread.
 *
 * <p>Transitions, each raising the segment's epoch to the applying entry's index:
 * unowned --assign--> owned(a); owned(a) --move to b--> releasing(a to b); releasing(a to b) --release by a-->
 * owned(b); owned(a) --release by a--> unowned; owned(a) or releasing(a to b) --expire a--> unowned (preferring
 * a, or b); releasing(a to b) --expire b--> owned(a). A member removed is expired first. A segment its topic's
 * layout no longer holds loses its record.
 */
final class OwnershipRegister {
    private static final Sinks.EmitFailureHandler RETRY = Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1));

    private final TreeMap<SegmentKey, SegmentOwner> owners = new TreeMap<>();
    private final TreeMap<String, RegisteredMember> members = new TreeMap<>();
    private final Sinks.Many<OwnershipTable> changes = Sinks.many().replay().latest();
    private volatile OwnershipTable table = OwnershipTable.EMPTY;

    OwnershipRegister() {
        changes.emitNext(table, RETRY);
    }

    OwnershipTable table() {
        return table;
    }

    /** The current table, then each after a change. */
    Flux<OwnershipTable> watch() {
        return changes.asFlux();
    }

    /**
     * Applies one change at {@code index}, its commands in the order expire, release, assign, move, each on
     * its own; {@code layouts} answers a topic's current layout.
     */
    OwnershipOutcome apply(long index, OwnershipChange change, Function<String, Optional<Layout>> layouts) {
        int size = change.getExpireCount() + change.getReleaseCount() + change.getAssignCount() + change.getMoveCount();
        if (size == 0) {
            return new OwnershipOutcome.Invalid("entry " + index + " changes no ownership");
        }
        Optional<String> unreadable = unreadable(change);
        if (unreadable.isPresent()) {
            return new OwnershipOutcome.Invalid("entry " + index + ": " + unreadable.get());
        }
        List<String> refused = new ArrayList<>();
        for (String member : change.getExpireList()) {
            refuse(refused, expire(index, member));
        }
        for (Release r : change.getReleaseList()) {
            refuse(refused, release(index, key(r.getSegment()), r.getEpoch(), r.getBy()));
        }
        for (Assign a : change.getAssignList()) {
            refuse(refused, assign(index, key(a.getSegment()), a.getTo(), layouts));
        }
        for (Move m : change.getMoveList()) {
            refuse(refused, move(index, key(m.getSegment()), m.getExpectedEpoch(), m.getTo()));
        }
        publish(index, size > refused.size());
        return new OwnershipOutcome.Applied(index, size - refused.size(), refused);
    }

    /** What makes the change unreadable as a whole (a segment without its topic, say); empty when nothing. */
    private static Optional<String> unreadable(OwnershipChange change) {
        List<SegmentRef> refs = new ArrayList<>();
        change.getReleaseList().forEach(r -> refs.add(r.getSegment()));
        change.getAssignList().forEach(a -> refs.add(a.getSegment()));
        change.getMoveList().forEach(m -> refs.add(m.getSegment()));
        for (SegmentRef ref : refs) {
            if (ref.getTopic().isEmpty()) {
                return Optional.of("segment " + ref.getSegment() + " names no topic");
            }
            if (ref.getSegment() < 0) {
                return Optional.of("segment " + Long.toUnsignedString(ref.getSegment()) + " of " + ref.getTopic()
                        + " is out of range");
            }
        }
        return Optional.empty();
    }

    /**
     * Why {@code next} cannot be registered: another member that is not removed has its verifying key (one secret
     * would speak for two members), or it is registered, not removed, with another key (a registration does not
     * take a member's identity over; remove it first).
     */
    private Optional<String> clash(RegisteredMember next) {
        if (next.verifyingKey().isEmpty()) {
            return Optional.empty();
        }
        for (RegisteredMember m : members.values()) {
            if (m.state() == RegisteredMember.State.REMOVED) {
                continue;
            }
            if (!m.id().equals(next.id()) && m.verifyingKey().equals(next.verifyingKey())) {
                return Optional.of("member " + m.id() + " has the verifying key of " + next.id() + " already");
            }
            if (m.id().equals(next.id()) && !m.verifyingKey().isEmpty()
                    && !m.verifyingKey().equals(next.verifyingKey())) {
                return Optional.of("member " + next.id() + " is registered with another verifying key");
            }
        }
        return Optional.empty();
    }

    /** Registers or updates a member; one removed is expired first (it owns nothing after). */
    OwnershipOutcome member(long index, MemberChange change) {
        BrokerMember m = change.getMember();
        RegisteredMember next;
        try {
            next = fromProto(m);
        } catch (IllegalArgumentException e) {
            return new OwnershipOutcome.Invalid("entry " + index + ": " + e.getMessage());
        }
        Optional<String> clash = clash(next);
        if (clash.isPresent()) {
            return new OwnershipOutcome.Invalid("entry " + index + ": " + clash.get());
        }
        if (next.state() == RegisteredMember.State.REMOVED && members.containsKey(next.id())) {
            expire(index, next.id());
        }
        members.put(next.id(), next);
        publish(index, true);
        return new OwnershipOutcome.Applied(index, 1, List.of());
    }

    /** Drops the records of segments {@code layout} no longer holds (pruned). */
    void layoutChanged(long index, String topic, Layout layout) {
        Map<SegmentKey, SegmentOwner> ofTopic = owners.subMap(new SegmentKey(topic, 0), true,
                new SegmentKey(topic, Long.MAX_VALUE), true);
        boolean changed = ofTopic.keySet().removeIf(k -> layout.segment(k.segment()).isEmpty());
        publish(index, changed);
    }

    private static void refuse(List<String> refused, Optional<String> why) {
        why.ifPresent(refused::add);
    }

    private Optional<String> expire(long index, String member) {
        if (!members.containsKey(member)) {
            return Optional.of("expire " + member + ": not a registered member");
        }
        for (Map.Entry<SegmentKey, SegmentOwner> e : owners.entrySet()) {
            SegmentOwner o = e.getValue();
            if (o.phase() == SegmentOwner.Phase.UNOWNED) {
                continue;
            }
            if (o.owner().equals(member)) {
                String preferred = o.phase() == SegmentOwner.Phase.RELEASING ? o.to() : member;
                e.setValue(SegmentOwner.unowned(e.getKey(), index, preferred));
            } else if (o.phase() == SegmentOwner.Phase.RELEASING && o.to().equals(member)) {
                e.setValue(SegmentOwner.owned(e.getKey(), o.owner(), index));
            }
        }
        return Optional.empty();
    }

    private Optional<String> release(long index, SegmentKey segment, long epoch, String by) {
        SegmentOwner o = owners.get(segment);
        if (o == null || o.phase() == SegmentOwner.Phase.UNOWNED || !o.owner().equals(by) || o.epoch() != epoch) {
            return Optional.of("release " + segment + "@" + epoch + " by " + by + ": " + describe(o));
        }
        if (o.phase() == SegmentOwner.Phase.RELEASING && active(o.to())) {
            owners.put(segment, SegmentOwner.owned(segment, o.to(), index));
        } else {
            owners.put(segment, SegmentOwner.unowned(segment, index, ""));
        }
        return Optional.empty();
    }

    private Optional<String> assign(long index, SegmentKey segment, String to,
            Function<String, Optional<Layout>> layouts) {
        boolean held = layouts.apply(segment.topic()).flatMap(l -> l.segment(segment.segment())).isPresent();
        if (!held) {
            return Optional.of("assign " + segment + " to " + to + ": no layout of " + segment.topic()
                    + " holds segment " + segment.segment());
        }
        if (!active(to)) {
            return Optional.of("assign " + segment + " to " + to + ": " + inactive(to));
        }
        SegmentOwner o = owners.get(segment);
        if (o != null && o.phase() != SegmentOwner.Phase.UNOWNED) {
            return Optional.of("assign " + segment + " to " + to + ": " + describe(o));
        }
        owners.put(segment, SegmentOwner.owned(segment, to, index));
        return Optional.empty();
    }

    private Optional<String> move(long index, SegmentKey segment, long expectedEpoch, String to) {
        SegmentOwner o = owners.get(segment);
        if (o == null || o.phase() != SegmentOwner.Phase.OWNED || o.epoch() != expectedEpoch) {
            return Optional.of("move " + segment + "@" + expectedEpoch + " to " + to + ": " + describe(o));
        }
        if (!active(to) || o.owner().equals(to)) {
            return Optional.of("move " + segment + " to " + to + ": "
                    + (o.owner().equals(to) ? "it owns it already" : inactive(to)));
        }
        owners.put(segment, SegmentOwner.releasing(segment, o.owner(), index, to));
        return Optional.empty();
    }

    private boolean active(String member) {
        RegisteredMember m = members.get(member);
        return m != null && m.state() == RegisteredMember.State.ACTIVE;
    }

    private String inactive(String member) {
        RegisteredMember m = members.get(member);
        return m == null ? "not a registered member" : "member is " + m.state();
    }

    private static String describe(@Nullable SegmentOwner o) {
        return o == null ? "never owned" : "it is " + o;
    }

    private void publish(long index, boolean changed) {
        if (changed) {
            table = new OwnershipTable(index, owners, members);
            changes.emitNext(table, RETRY);
        }
    }

    // ---- snapshot

    List<SegmentOwnership> ownersToProto() {
        return owners.values().stream().map(OwnershipRegister::toProto).toList();
    }

    List<BrokerMember> membersToProto() {
        return members.values().stream().map(OwnershipRegister::toProto).toList();
    }

    /** Replaces everything by a snapshot's (newer than what it replaces). */
    void restore(long epoch, List<SegmentOwnership> snapshotOwners, List<BrokerMember> snapshotMembers) {
        owners.clear();
        members.clear();
        for (SegmentOwnership o : snapshotOwners) {
            SegmentKey k = key(o.getSegment());
            owners.put(k, new SegmentOwner(k, phase(o.getPhase()), o.getOwner(), o.getEpoch(), o.getTo(),
                    o.getPreferred()));
        }
        for (BrokerMember m : snapshotMembers) {
            RegisteredMember r = fromProto(m);
            members.put(r.id(), r);
        }
        table = new OwnershipTable(epoch, owners, members);
        changes.emitNext(table, RETRY);
    }

    static SegmentKey key(SegmentRef ref) {
        return new SegmentKey(ref.getTopic(), ref.getSegment());
    }

    static SegmentRef ref(SegmentKey key) {
        return SegmentRef.newBuilder().setTopic(key.topic()).setSegment(key.segment()).build();
    }

    private static SegmentOwnership toProto(SegmentOwner o) {
        return SegmentOwnership.newBuilder().setSegment(ref(o.segment())).setOwner(o.owner()).setEpoch(o.epoch())
                .setPhase(OwnerPhase.valueOf(o.phase().name())).setTo(o.to()).setPreferred(o.preferred()).build();
    }

    private static SegmentOwner.Phase phase(OwnerPhase p) {
        return switch (p) {
            case OWNED -> SegmentOwner.Phase.OWNED;
            case RELEASING -> SegmentOwner.Phase.RELEASING;
            case UNOWNED -> SegmentOwner.Phase.UNOWNED;
            case OWNER_PHASE_UNSPECIFIED, UNRECOGNIZED ->
                    throw new IllegalStateException("a snapshot's segment ownership has no phase");
        };
    }

    static BrokerMember toProto(RegisteredMember m) {
        return BrokerMember.newBuilder().setId(m.id()).setState(MemberState.valueOf(m.state().name()))
                .setRaftAddress(m.raftAddress()).setIngestUrl(m.ingestUrl()).setAdminUrl(m.adminUrl())
                .setVerifyingKey(m.verifyingKey()).build();
    }

    private static RegisteredMember fromProto(BrokerMember m) {
        RegisteredMember.State state = switch (m.getState()) {
            case ACTIVE -> RegisteredMember.State.ACTIVE;
            case DRAINING -> RegisteredMember.State.DRAINING;
            case REMOVED -> RegisteredMember.State.REMOVED;
            case MEMBER_STATE_UNSPECIFIED, UNRECOGNIZED ->
                    throw new IllegalArgumentException("member " + m.getId() + " names no state");
        };
        return new RegisteredMember(m.getId(), state, m.getRaftAddress(), m.getIngestUrl(), m.getAdminUrl(),
                m.getVerifyingKey());
    }
}
