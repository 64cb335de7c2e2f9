package io.verbatim.metadatalog.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.Assign;
import io.verbatim.metadatalog.proto.BrokerMember;
import io.verbatim.metadatalog.proto.CompareAndSetLayout;
import io.verbatim.metadatalog.proto.CreateTopic;
import io.verbatim.metadatalog.proto.LayoutCommand;
import io.verbatim.metadatalog.proto.LayoutRegisterSnapshot;
import io.verbatim.metadatalog.proto.MemberChange;
import io.verbatim.metadatalog.proto.MemberState;
import io.verbatim.metadatalog.proto.Move;
import io.verbatim.metadatalog.proto.OwnershipChange;
import io.verbatim.metadatalog.proto.Release;
import io.verbatim.metadatalog.proto.SegmentRef;
import io.verbatim.metadatalog.proto.TopicLayout;
import io.verbatim.model.Layout;
import io.verbatim.model.LayoutCodec;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

class OwnershipRegisterTest {
    private static final String T = "persistent://public/default/orders";
    private final LayoutRegister register = new LayoutRegister();
    private long index;

    private Object apply(LayoutCommand command) {
        return register.apply(++index, command.toByteString());
    }

    private Object apply(OwnershipChange.Builder change) {
        return apply(LayoutCommand.newBuilder().setOwnership(change).build());
    }

    private void member(String id, MemberState state) {
        apply(LayoutCommand.newBuilder().setMember(MemberChange.newBuilder()
                .setMember(BrokerMember.newBuilder().setId(id).setState(state))).build());
    }

    private static SegmentRef ref(long segment) {
        return SegmentRef.newBuilder().setTopic(T).setSegment(segment).build();
    }

    private static OwnershipChange.Builder assign(long segment, String to) {
        return OwnershipChange.newBuilder().addAssign(Assign.newBuilder().setSegment(ref(segment)).setTo(to));
    }

    private static OwnershipChange.Builder move(long segment, long expected, String to) {
        return OwnershipChange.newBuilder()
                .addMove(Move.newBuilder().setSegment(ref(segment)).setExpectedEpoch(expected).setTo(to));
    }

    private static OwnershipChange.Builder release(long segment, long epoch, String by) {
        return OwnershipChange.newBuilder()
                .addRelease(Release.newBuilder().setSegment(ref(segment)).setEpoch(epoch).setBy(by));
    }

    private static OwnershipChange.Builder expire(String member) {
        return OwnershipChange.newBuilder().addExpire(member);
    }

    private SegmentOwner owner(long segment) {
        return register.ownership().of(new SegmentKey(T, segment)).orElseThrow();
    }

    private Layout createTopic(int segments) {
        Layout initial = Layout.initial(segments, 1, 0);
        apply(LayoutCommand.newBuilder().setTopic(T)
                .setCreate(CreateTopic.newBuilder().setInitial(LayoutCodec.toProto(initial))).build());
        return initial;
    }

    private void setUp() {
        createTopic(2);
        member("b1", MemberState.ACTIVE);
        member("b2", MemberState.ACTIVE);
    }

    @Test
    void aSegmentIsAssignedMovedThroughReleasingAndReleasedToItsNewOwnerEachStepRaisingItsEpoch() {
        setUp();
        assertThat(apply(assign(0, "b1"))).isEqualTo(new OwnershipOutcome.Applied(index, 1, List.of()));
        long assigned = index;
        assertThat(owner(0)).isEqualTo(SegmentOwner.owned(new SegmentKey(T, 0), "b1", assigned));
        assertThat(register.ownership().ownedBy("b1")).containsExactly(new SegmentKey(T, 0));

        apply(move(0, assigned, "b2"));
        long moved = index;
        assertThat(owner(0).phase()).isEqualTo(SegmentOwner.Phase.RELEASING);
        assertThat(owner(0).epoch()).isEqualTo(moved);
        assertThat(register.ownership().ownedBy("b1")).as("nobody acts while it is released").isEmpty();
        assertThat(register.ownership().ownedBy("b2")).isEmpty();

        apply(release(0, moved, "b1"));
        assertThat(owner(0)).isEqualTo(SegmentOwner.owned(new SegmentKey(T, 0), "b2", index));
        assertThat(register.ownership().epoch()).isEqualTo(index);
    }

    @Test
    void staleEpochsOwnedSegmentsUnknownOrDrainingMembersAndSegmentsNoLayoutHoldsAreRefusedByName() {
        setUp();
        member("b3", MemberState.DRAINING);
        apply(assign(0, "b1"));
        long epoch = index;
        assertThat(apply(assign(0, "b2"))).isEqualTo(new OwnershipOutcome.Applied(index, 0,
                List.of("assign " + T + "#0 to b2: it is " + T + "#0 b1@" + epoch)));
        assertThat(apply(move(0, epoch - 1, "b2")))
                .isEqualTo(new OwnershipOutcome.Applied(index, 0, List.of("move " + T + "#0@" + (epoch - 1)
                        + " to b2: it is " + T + "#0 b1@" + epoch)));
        assertThat(apply(assign(1, "nobody"))).isEqualTo(new OwnershipOutcome.Applied(index, 0,
                List.of("assign " + T + "#1 to nobody: not a registered member")));
        assertThat(apply(assign(1, "b3"))).isEqualTo(new OwnershipOutcome.Applied(index, 0,
                List.of("assign " + T + "#1 to b3: member is DRAINING")));
        assertThat(apply(assign(9, "b1"))).isEqualTo(new OwnershipOutcome.Applied(index, 0,
                List.of("assign " + T + "#9 to b1: no layout of " + T + " holds segment 9")));
        assertThat(apply(release(0, epoch, "b2"))).isEqualTo(new OwnershipOutcome.Applied(index, 0,
                List.of("release " + T + "#0@" + epoch + " by b2: it is " + T + "#0 b1@" + epoch)));
        assertThat(apply(move(0, epoch, "b1"))).isEqualTo(new OwnershipOutcome.Applied(index, 0,
                List.of("move " + T + "#0 to b1: it owns it already")));
        assertThat(apply(expire("ghost"))).isEqualTo(new OwnershipOutcome.Applied(index, 0,
                List.of("expire ghost: not a registered member")));
        assertThat(owner(0)).isEqualTo(SegmentOwner.owned(new SegmentKey(T, 0), "b1", epoch));
    }

    @Test
    void anExpiredOwnerLosesItsSegmentsRememberedAsPreferredAndAMoveToAnExpiredMemberReturnsToItsOwner() {
        setUp();
        member("b3", MemberState.ACTIVE);
        apply(assign(0, "b1").addAssign(Assign.newBuilder().setSegment(ref(1)).setTo("b2")));
        apply(move(1, index, "b3"));
        apply(expire("b1"));
        assertThat(owner(0)).isEqualTo(SegmentOwner.unowned(new SegmentKey(T, 0), index, "b1"));
        assertThat(owner(1).phase()).as("b2 -> b3 untouched by b1's expiry").isEqualTo(SegmentOwner.Phase.RELEASING);
        apply(expire("b3"));
        assertThat(owner(1)).isEqualTo(SegmentOwner.owned(new SegmentKey(T, 1), "b2", index));
        apply(move(1, index, "b1"));
        apply(expire("b2"));
        assertThat(owner(1)).as("the owner expired mid-move: the move's target is preferred")
                .isEqualTo(SegmentOwner.unowned(new SegmentKey(T, 1), index, "b1"));
        assertThat(apply(assign(1, "b1"))).isEqualTo(new OwnershipOutcome.Applied(index, 1, List.of()));
    }

    @Test
    void anOwnerMayReleaseToNobodyAndARemovedMemberOwnsNothing() {
        setUp();
        apply(assign(0, "b1").addAssign(Assign.newBuilder().setSegment(ref(1)).setTo("b1")));
        long epoch = index;
        apply(release(0, epoch, "b1"));
        assertThat(owner(0)).isEqualTo(SegmentOwner.unowned(new SegmentKey(T, 0), index, ""));
        member("b1", MemberState.REMOVED);
        assertThat(owner(1)).isEqualTo(SegmentOwner.unowned(new SegmentKey(T, 1), index, "b1"));
        assertThat(register.ownership().activeMembers()).containsExactly("b2");
        assertThat(apply(assign(1, "b1"))).isInstanceOfSatisfying(OwnershipOutcome.Applied.class,
                a -> assertThat(a.refused()).containsExactly("assign " + T + "#1 to b1: member is REMOVED"));
    }

    @Test
    void aPrunedSegmentLosesItsOwnershipInTheSameApply() {
        setUp();
        Layout layout = register.get(T).orElseThrow();
        apply(assign(0, "b1"));
        Layout split = layout.apply(Mutation.split(0), layout.epoch(), 0).layoutOrThrow();
        apply(LayoutCommand.newBuilder().setTopic(T).setCompareAndSet(CompareAndSetLayout.newBuilder()
                .setExpectedEpoch(layout.epoch()).setNext(LayoutCodec.toProto(split))).build());
        assertThat(owner(0).owner()).as("sealed, not pruned: still owned (it drains)").isEqualTo("b1");
        Layout pruned = split.apply(Mutation.prune(0), split.epoch(), 0).layoutOrThrow();
        apply(LayoutCommand.newBuilder().setTopic(T).setCompareAndSet(CompareAndSetLayout.newBuilder()
                .setExpectedEpoch(split.epoch()).setNext(LayoutCodec.toProto(pruned))).build());
        assertThat(register.ownership().of(new SegmentKey(T, 0))).isEmpty();
        assertThat(register.ownership().epoch()).isEqualTo(index);
    }

    @Test
    void anUnreadableOrEmptyChangeIsAnOutcomeAndChangesNothing() {
        setUp();
        apply(assign(0, "b1"));
        OwnershipTable before = register.ownership();
        assertThat(apply(OwnershipChange.newBuilder()))
                .isEqualTo(new OwnershipOutcome.Invalid("entry " + index + " changes no ownership"));
        assertThat(apply(assign(1, "b1").addRelease(Release.newBuilder().setSegment(SegmentRef.newBuilder()
                .setSegment(3)).setBy("b1")))).isEqualTo(new OwnershipOutcome.Invalid("entry " + index
                        + ": segment 3 names no topic"));
        assertThat(apply(LayoutCommand.newBuilder().setMember(MemberChange.newBuilder()
                .setMember(BrokerMember.newBuilder().setId("b9"))).build()))
                .isEqualTo(new OwnershipOutcome.Invalid("entry " + index + ": member b9 names no state"));
        assertThat(register.ownership()).isEqualTo(before);
    }

    @Test
    void aWatchSeesTheTableThenEachChange() {
        setUp();
        StepVerifier.create(register.watchOwnership().take(2))
                .assertNext(t -> assertThat(t.members()).containsOnlyKeys("b1", "b2"))
                .then(() -> apply(assign(0, "b2")))
                .assertNext(t -> assertThat(t.ownedBy("b2")).containsExactly(new SegmentKey(T, 0)))
                .verifyComplete();
    }

    @Test
    void aSnapshotWithoutOwnershipAnOlderMembersRestoreReadsAsNothingOwned() {
        setUp();
        apply(assign(0, "b1"));
        Layout layout = register.get(T).orElseThrow();
        ByteString old = LayoutRegisterSnapshot.newBuilder()
                .addTopics(TopicLayout.newBuilder().setTopic(T).setLayout(LayoutCodec.toProto(layout))).build()
                .toByteString();
        LayoutRegister restored = new LayoutRegister();
        restored.restore(old);
        assertThat(restored.get(T)).contains(layout);
        assertThat(restored.ownership()).isEqualTo(OwnershipTable.EMPTY);
        register.restore(old);
        assertThat(register.ownership().segments()).as("a snapshot's ownership replaces, whole").isEmpty();
    }

    /**
     * Random ownership, member and layout commands, valid and not, on two registers: the same outcomes and
     * snapshots, a restored snapshot equal to its source, epochs never lower, and at most one owner acting.
     */
    @Test
    void theSameCommandsGiveTheSameOwnershipOnEveryMemberAndThroughSnapshots() {
        long base = Long.getLong("verbatim.seed", 0L);
        int cases = Integer.getInteger("verbatim.cases", 300);
        for (long seed = base; seed < base + cases; seed++) {
            Random r = new Random(seed);
            List<ByteString> commands = randomCommands(r, 80);
            LayoutRegister a = new LayoutRegister();
            LayoutRegister b = new LayoutRegister();
            Map<SegmentKey, Long> epochs = new HashMap<>();
            for (int i = 0; i < commands.size(); i++) {
                Object outcome = a.apply(i + 1, commands.get(i));
                assertThat(b.apply(i + 1, commands.get(i))).as("seed %d, entry %d", seed, i + 1).isEqualTo(outcome);
                for (SegmentOwner o : a.ownership().segments().values()) {
                    Long before = epochs.put(o.segment(), o.epoch());
                    assertThat(o.epoch()).as("seed %d: %s", seed, o).isGreaterThanOrEqualTo(before == null ? 0 : before);
                    if (o.phase() != SegmentOwner.Phase.UNOWNED) {
                        assertThat(a.ownership().members()).as("seed %d: %s", seed, o).containsKey(o.owner());
                    }
                    assertThat(a.get(o.segment().topic()).flatMap(l -> l.segment(o.segment().segment())))
                            .as("seed %d: %s is in its layout", seed, o).isPresent();
                }
            }
            assertThat(b.snapshot()).as("seed %d", seed).isEqualTo(a.snapshot());
            LayoutRegister restored = new LayoutRegister();
            restored.restore(a.snapshot());
            assertThat(restored.ownership()).as("seed %d", seed).isEqualTo(a.ownership());
            assertThat(restored.snapshot()).as("seed %d", seed).isEqualTo(a.snapshot());
        }
    }

    private static List<ByteString> randomCommands(Random r, int n) {
        List<ByteString> out = new ArrayList<>();
        String[] members = {"b1", "b2", "b3", "b4"};
        Layout layout = Layout.initial(3, 1, 0);
        out.add(LayoutCommand.newBuilder().setTopic(T).setCreate(CreateTopic.newBuilder()
                .setInitial(LayoutCodec.toProto(layout))).build().toByteString());
        for (int i = 0; i < n; i++) {
            int kind = r.nextInt(12);
            long seg = r.nextInt((int) layout.nextSegmentId() + 1);
            String m = members[r.nextInt(members.length)];
            long epoch = r.nextInt(i + 2);
            LayoutCommand.Builder c = LayoutCommand.newBuilder();
            switch (kind) {
                case 0, 1 -> c.setMember(MemberChange.newBuilder().setMember(BrokerMember.newBuilder().setId(m)
                        .setState(MemberState.forNumber(1 + r.nextInt(r.nextInt(4) == 0 ? 3 : 1)))));
                case 2, 3, 4 -> c.setOwnership(assign(seg, m));
                case 5, 6 -> c.setOwnership(move(seg, epoch, m));
                case 7, 8 -> c.setOwnership(release(seg, epoch, m));
                case 9 -> c.setOwnership(expire(m).addAssign(Assign.newBuilder().setSegment(ref(seg)).setTo(m)));
                case 10 -> {
                    List<Segment> active = layout.activeSegments();
                    Layout next = layout.apply(Mutation.split(active.get(r.nextInt(active.size())).id()),
                            layout.epoch(), 0).layoutOrThrow();
                    c.setTopic(T).setCompareAndSet(CompareAndSetLayout.newBuilder().setExpectedEpoch(layout.epoch())
                            .setNext(LayoutCodec.toProto(next)));
                    layout = next;
                }
                default -> {
                    Segment sealed = layout.segments().values().stream().filter(Segment::isSealed).findFirst()
                            .orElse(null);
                    if (sealed == null) {
                        c.setOwnership(assign(seg, m));
                    } else {
                        Layout next = layout.apply(Mutation.prune(sealed.id()), layout.epoch(), 0).layoutOrThrow();
                        c.setTopic(T).setCompareAndSet(CompareAndSetLayout.newBuilder()
                                .setExpectedEpoch(layout.epoch()).setNext(LayoutCodec.toProto(next)));
                        layout = next;
                    }
                }
            }
            out.add(c.build().toByteString());
        }
        return out;
    }
}
