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
    private final ReplicatedLog log = new ReplicatedLog() {
        private long index;

        @Override
        public synchronized Mono<Object> submit(ByteString command) {
            return Mono.fromCallable(() -> register.apply(++index, command));
        }

        @Override
        public Mono<Void> readBarrier() {
            return Mono.empty();
        }
    };
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
}
