package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.server.ReplicatedLog;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipLog;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.metadatalog.state.SegmentOwner;
import io.verbatim.model.Layout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

class OwnershipLoopTest {
    private static final String T = "persistent://public/default/t";
    private static final Duration LEASE = Duration.ofSeconds(10);
    private final LayoutRegister register = new LayoutRegister();
    private final ReplicatedLog log = new DirectLog(register);
    private final OwnershipLog ownership = new OwnershipLog(log, register, Schedulers.immediate());
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    private SortedMap<String, Layout> layouts() {
        return new TreeMap<>(Map.of(T, register.get(T).orElseThrow()));
    }

    private OwnershipLoop loop() {
        new RaftLayoutStore(log, register, Schedulers.immediate()).create(T, Layout.initial(4, 1, 0)).block();
        return new OwnershipLoop("east", ownership, LEASE, OwnershipPlanner.Settings.DEFAULTS, this::layouts, Map::of,
                clock).start(List.of("b1", "b2"), Duration.ofSeconds(1));
    }

    private long now() {
        return clock.now(TimeUnit.MILLISECONDS);
    }

    @Test
    void theConfiguredMembersAreRegisteredEverySegmentOwnedAndOneSilentForALeaseLosesItsShare() {
        OwnershipLoop loop = loop();
        assertThat(register.ownership().activeMembers()).containsExactly("b1", "b2");
        clock.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(register.ownership().ownedBy("b1")).hasSize(2);
        assertThat(register.ownership().ownedBy("b2")).hasSize(2);
        for (int s = 0; s < 11; s++) {
            assertThat(loop.reported("b1", now(), List.of(), false)).isTrue();
            clock.advanceTimeBy(Duration.ofSeconds(1));
        }
        assertThat(register.ownership().ownedBy("b1")).as("b2 silent since the takeover: expired").hasSize(4);
        assertThat(loop.epoch()).isEqualTo(register.ownership().epoch());
        loop.dispose();
    }

    @Test
    void aMemberLeavingIsDrainedThroughItsReleasesAndRemovedOnceItOwnsNothing() {
        OwnershipLoop loop = loop();
        clock.advanceTimeBy(Duration.ofSeconds(1));
        loop.reported("b1", now(), List.of(), false);
        loop.reported("b2", now(), List.of(), true);
        assertThat(register.ownership().member("b2").orElseThrow().state()).isEqualTo(RegisteredMember.State.DRAINING);
        clock.advanceTimeBy(Duration.ofSeconds(1));
        List<OwnershipCommand.Release> releases = register.ownership().segments().values().stream()
                .filter(o -> o.phase() == SegmentOwner.Phase.RELEASING && o.owner().equals("b2"))
                .map(o -> new OwnershipCommand.Release(o.segment(), o.epoch(), "b2")).toList();
        assertThat(releases).hasSize(2);
        assertThat(loop.reported("b2", now(), List.of(new OwnershipCommand.Release(new SegmentKey(T, 9), 1, "b1")), true))
                .isTrue();
        assertThat(register.ownership().ownedBy("b1")).as("a release signed by another member is not taken").hasSize(2);
        loop.reported("b2", now(), releases, true);
        assertThat(register.ownership().ownedBy("b1")).hasSize(4);
        clock.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(register.ownership().member("b2").orElseThrow().state()).isEqualTo(RegisteredMember.State.REMOVED);
        loop.dispose();
    }

    @Test
    void aMemberBackAfterItDrainedIsActiveAgainAndGetsItsShare() {
        OwnershipLoop loop = loop();
        clock.advanceTimeBy(Duration.ofSeconds(1));
        ownership.register(RegisteredMember.configured("b2", RegisteredMember.State.REMOVED)).block();
        assertThat(register.ownership().ownedBy("b2")).isEmpty();
        loop.reported("b1", now(), List.of(), false);
        clock.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(register.ownership().ownedBy("b1")).hasSize(4);
        loop.reported("b2", now(), List.of(), false); // restarted: not leaving
        assertThat(register.ownership().member("b2").orElseThrow().state()).isEqualTo(RegisteredMember.State.ACTIVE);
        for (int s = 0; s < 80 && register.ownership().ownedBy("b2").size() < 2; s++) { // past the 60 s tenure
            loop.reported("b1", now(), List.of(), false);
            loop.reported("b2", now(), List.of(), false);
            clock.advanceTimeBy(Duration.ofSeconds(1));
            List<OwnershipCommand.Release> releases = register.ownership().segments().values().stream()
                    .filter(o -> o.phase() == SegmentOwner.Phase.RELEASING && o.owner().equals("b1"))
                    .map(o -> new OwnershipCommand.Release(o.segment(), o.epoch(), "b1")).toList();
            loop.reported("b1", now(), releases, false);
        }
        assertThat(register.ownership().ownedBy("b2")).as("balanced back").hasSize(2);
        loop.dispose();
    }

    /**
     * A member lapsed while it held segments reports again while the plan that expires it is in flight: no lease
     * until the expiry took effect (an answer meanwhile would let it act on what the expiry gives away).
     */
    @Test
    void aLapsedMemberGetsNoLeaseWhileItsExpiryIsInFlight() {
        new RaftLayoutStore(log, register, Schedulers.immediate()).create(T, Layout.initial(2, 1, 0)).block();
        List<reactor.core.publisher.Sinks.One<Object>> held = new java.util.ArrayList<>();
        List<ByteString> commands = new java.util.ArrayList<>();
        boolean[] holding = {false};
        ReplicatedLog slow = new ReplicatedLog() {
            @Override
            public synchronized Mono<Object> submit(ByteString command) {
                if (!holding[0]) {
                    return log.submit(command);
                }
                reactor.core.publisher.Sinks.One<Object> answer = reactor.core.publisher.Sinks.one();
                held.add(answer);
                commands.add(command);
                return answer.asMono();
            }

            @Override
            public Mono<Void> readBarrier() {
                return Mono.empty();
            }
        };
        OwnershipLoop loop = new OwnershipLoop("east", new OwnershipLog(slow, register, Schedulers.immediate()), LEASE,
                OwnershipPlanner.Settings.DEFAULTS, this::layouts, Map::of, clock)
                .start(List.of("b1", "b2"), Duration.ofSeconds(1));
        clock.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(register.ownership().ownedBy("b2")).hasSize(1);
        holding[0] = true;
        for (int s = 0; s < 10; s++) {
            loop.reported("b1", now(), List.of(), false);
            clock.advanceTimeBy(Duration.ofSeconds(1));
        }
        assertThat(held).as("the plan expiring b2, not committed yet").hasSize(1);
        assertThat(loop.reported("b2", now(), List.of(), false)).as("b2's report meanwhile: no lease").isFalse();
        holding[0] = false;
        held.get(0).tryEmitValue(register.apply(99, commands.get(0)));
        assertThat(register.ownership().ownedBy("b2")).isEmpty();
        clock.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(loop.reported("b2", now(), List.of(), false)).as("the expiry took effect").isTrue();
        loop.dispose();
    }
}
