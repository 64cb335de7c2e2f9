package io.verbatim.metadatalog.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Layout;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class OwnershipLogTest {
    private static final String T = "persistent://public/default/t";

    /** Issue 25: one secret never speaks for two members, and a registration does not take a member's id over. */
    @Test
    void aVerifyingKeyBelongsToOneMemberAndAMembersKeyIsNotReplacedWhileItIsRegistered() {
        LayoutRegister register = new LayoutRegister();
        OwnershipLog ownership = new OwnershipLog(new DirectLog(register), register, Schedulers.immediate());
        RegisteredMember b4 = new RegisteredMember("b4", RegisteredMember.State.ACTIVE, "h:1", "http://h:2",
                "http://h:3", "ed25519:KEY4");
        ownership.register(b4).block();
        ownership.register(b4.withState(RegisteredMember.State.DRAINING)).block(); // the same key: a state change
        RegisteredMember b5 = new RegisteredMember("b5", RegisteredMember.State.ACTIVE, "h:4", "http://h:5",
                "http://h:6", "ed25519:KEY4");
        StepVerifier.create(ownership.register(b5)).expectErrorSatisfies(e -> assertThat(e)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("member b4 has the verifying key"))
                .verify();
        StepVerifier.create(ownership.register(new RegisteredMember("b4", RegisteredMember.State.ACTIVE, "h:1",
                "http://h:2", "http://h:3", "ed25519:OTHER"))).expectErrorSatisfies(e -> assertThat(e)
                .hasMessageContaining("member b4 is registered with another verifying key")).verify();
        assertThat(register.ownership().member("b5")).isEmpty();

        ownership.register(b4.withState(RegisteredMember.State.REMOVED)).block();
        ownership.register(b5).block(); // the key is free once b4 is removed
        assertThat(register.ownership().member("b5")).contains(b5);
    }

    @Test
    void commandsGoThroughTheLogAsOneEntryAndEachIsCheckedWhereItApplies() {
        LayoutRegister register = new LayoutRegister();
        DirectLog log = new DirectLog(register);
        new RaftLayoutStore(log, register).create(T, Layout.initial(2, 1, 0)).block();
        OwnershipLog ownership = new OwnershipLog(log, register, Schedulers.immediate());
        ownership.register(RegisteredMember.configured("b1", RegisteredMember.State.ACTIVE)).block();
        ownership.register(new RegisteredMember("b2", RegisteredMember.State.ACTIVE, "h:7201", "http://h:6651",
                "http://h:8201", "ed25519:AAAA")).block();

        OwnershipOutcome.Applied applied = ownership.change(List.of(
                new OwnershipCommand.Assign(new SegmentKey(T, 0), "b1"),
                new OwnershipCommand.Assign(new SegmentKey(T, 1), "b2"),
                new OwnershipCommand.Assign(new SegmentKey(T, 1), "b1"))).block();
        assertThat(applied.epoch()).isEqualTo(4);
        assertThat(applied.applied()).isEqualTo(2);
        assertThat(applied.refused()).containsExactly("assign " + T + "#1 to b1: it is " + T + "#1 b2@4");

        OwnershipOutcome.Applied moved = ownership.change(List.of(
                new OwnershipCommand.Move(new SegmentKey(T, 0), 4, "b2"))).block();
        ownership.change(List.of(new OwnershipCommand.Release(new SegmentKey(T, 0), moved.epoch(), "b1"))).block();
        StepVerifier.create(ownership.read())
                .assertNext(t -> {
                    assertThat(t.ownedBy("b2")).containsExactly(new SegmentKey(T, 0), new SegmentKey(T, 1));
                    assertThat(t.member("b2").orElseThrow().raftAddress()).isEqualTo("h:7201");
                })
                .verifyComplete();
        assertThat(ownership.local().ownedBy("b1")).isEmpty();
        ownership.change(List.of(new OwnershipCommand.Expire("b2"))).block();
        assertThat(ownership.local().ownedBy("b2")).isEmpty();
        assertThat(ownership.local().of(new SegmentKey(T, 0)).orElseThrow().preferred()).isEqualTo("b2");
    }

    @Test
    void anEmptyOrUnreadableChangeIsRefusedWithWhatWasWrong() {
        LayoutRegister register = new LayoutRegister();
        OwnershipLog ownership = new OwnershipLog(new DirectLog(register), register, Schedulers.immediate());
        StepVerifier.create(ownership.change(List.of()))
                .verifyErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("an ownership change needs at least one command"));
    }
}
