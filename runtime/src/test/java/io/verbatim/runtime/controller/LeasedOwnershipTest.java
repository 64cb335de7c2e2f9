package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.metadatalog.server.ReplicatedLog;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipLog;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.model.Layout;
import io.verbatim.runtime.broker.Lease;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

class LeasedOwnershipTest {
    private static final String T = "persistent://public/default/t";
    private final LayoutRegister register = new LayoutRegister();
    private final ReplicatedLog log = new DirectLog(register);
    private final OwnershipLog ownership = new OwnershipLog(log, register, Schedulers.immediate());
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    private static SegmentKey seg(long id) {
        return new SegmentKey(T, id);
    }

    @Test
    void itActsOnWhatItOwnsOnlyWhileItsLeaseHoldsAndItsReplicaCaughtUpWithTheGrant() {
        new RaftLayoutStore(log, register, Schedulers.immediate()).create(T, Layout.initial(2, 1, 0)).block();
        ownership.register(RegisteredMember.configured("b1", RegisteredMember.State.ACTIVE)).block();
        ownership.register(RegisteredMember.configured("b2", RegisteredMember.State.ACTIVE)).block();
        ownership.change(List.of(new OwnershipCommand.Assign(seg(0), "b1"), new OwnershipCommand.Assign(seg(1), "b2")))
                .block();
        LeasedOwnership b1 = new LeasedOwnership("b1", new Lease(Duration.ofSeconds(10)), clock)
                .follow(register.watchOwnership());
        List<Long> changes = new CopyOnWriteArrayList<>();
        b1.changes().subscribe(changes::add);
        assertThat(b1.owns(T, 0)).as("no lease yet").isFalse();

        b1.granted(b1.nowMs(), 5);
        assertThat(b1.owns(T, 0)).as("its replica is at epoch 4, the leader had applied 5").isFalse();
        ownership.register(RegisteredMember.configured("b3", RegisteredMember.State.ACTIVE)).block();
        assertThat(b1.owns(T, 0)).as("its replica applied 5").isTrue();
        assertThat(b1.owns(T, 1)).isFalse();
        assertThat(changes).hasSize(1);

        clock.advanceTimeBy(Duration.ofMillis(8_999));
        assertThat(b1.owns(T, 0)).isTrue();
        clock.advanceTimeBy(Duration.ofMillis(2));
        assertThat(b1.owns(T, 0)).as("10 s less the 1 s margin: lapsed, without any other event").isFalse();
        assertThat(changes).hasSize(2);
        b1.close();
    }

    @Test
    void aMoveStopsItBeforeTheChangeReturnsAndOnlyThenOffersTheRelease() {
        new RaftLayoutStore(log, register, Schedulers.immediate()).create(T, Layout.initial(1, 1, 0)).block();
        ownership.register(RegisteredMember.configured("b1", RegisteredMember.State.ACTIVE)).block();
        ownership.register(RegisteredMember.configured("b2", RegisteredMember.State.ACTIVE)).block();
        long assigned = ownership.change(List.of(new OwnershipCommand.Assign(seg(0), "b1"))).block().epoch();
        LeasedOwnership b1 = new LeasedOwnership("b1", new Lease(Duration.ofSeconds(10)), clock)
                .follow(register.watchOwnership());
        b1.granted(b1.nowMs(), assigned);
        List<Boolean> ownedWhenSignalled = new CopyOnWriteArrayList<>();
        b1.changes().subscribe(v -> ownedWhenSignalled.add(b1.owns(T, 0)));

        long moved = ownership.change(List.of(new OwnershipCommand.Move(seg(0), assigned, "b2"))).block().epoch();
        assertThat(ownedWhenSignalled).containsExactly(false);
        assertThat(b1.releasable()).containsExactly(new OwnershipCommand.Release(seg(0), moved, "b1"));
        ownership.change(b1.releasable().stream().map(OwnershipCommand.class::cast).toList()).block();
        assertThat(b1.releasable()).isEmpty();
        assertThat(register.ownership().ownedBy("b2")).containsExactly(seg(0));
        b1.close();
    }

    @Test
    void aMovedSegmentStillBeingHandedOverIsOfferedForReleaseOnlyOnceTheHandOverEnded() {
        new RaftLayoutStore(log, register, Schedulers.immediate()).create(T, Layout.initial(1, 1, 0)).block();
        ownership.register(RegisteredMember.configured("b1", RegisteredMember.State.ACTIVE)).block();
        ownership.register(RegisteredMember.configured("b2", RegisteredMember.State.ACTIVE)).block();
        long assigned = ownership.change(List.of(new OwnershipCommand.Assign(seg(0), "b1"))).block().epoch();
        LeasedOwnership b1 = new LeasedOwnership("b1", new Lease(Duration.ofSeconds(10)), clock)
                .follow(register.watchOwnership());
        java.util.Set<Long> handingOver = java.util.concurrent.ConcurrentHashMap.newKeySet();
        reactor.core.publisher.Sinks.Many<Long> ended = reactor.core.publisher.Sinks.many().multicast()
                .directBestEffort();
        b1.handOvers((topic, segment) -> handingOver.contains(segment), ended.asFlux());
        b1.granted(b1.nowMs(), assigned);
        // what a replication link does when told of the change: it starts handing the segment over
        b1.changes().subscribe(v -> {
            if (!b1.owns(T, 0) && b1.handsOver(T, 0)) {
                handingOver.add(0L);
            }
        });
        List<Long> offers = new CopyOnWriteArrayList<>();
        b1.offers().subscribe(offers::add);
        assertThat(b1.handsOver(T, 0)).as("owned, not moving").isFalse();

        long moved = ownership.change(List.of(new OwnershipCommand.Move(seg(0), assigned, "b2"))).block().epoch();
        assertThat(b1.owns(T, 0)).isFalse();
        assertThat(b1.handsOver(T, 0)).isTrue();
        assertThat(b1.releasable()).as("still handing over").isEmpty();
        assertThat(offers).isEmpty();

        handingOver.remove(0L);
        ended.tryEmitNext(0L);
        clock.advanceTimeBy(Duration.ZERO);
        assertThat(b1.releasable()).containsExactly(new OwnershipCommand.Release(seg(0), moved, "b1"));
        assertThat(offers).hasSize(1);

        List<Boolean> handingWhenTold = new CopyOnWriteArrayList<>();
        b1.changes().subscribe(v -> handingWhenTold.add(b1.handsOver(T, 0)));
        clock.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(b1.handsOver(T, 0)).as("the lease lapsed: whatever it still does is stopped at once").isFalse();
        assertThat(handingWhenTold).as("told, though it acted on nothing else").containsExactly(false);
        b1.close();
    }

    @Test
    void aFailedWatchLeavesItActingOnNothing() {
        new RaftLayoutStore(log, register, Schedulers.immediate()).create(T, Layout.initial(1, 1, 0)).block();
        ownership.register(RegisteredMember.configured("b1", RegisteredMember.State.ACTIVE)).block();
        long assigned = ownership.change(List.of(new OwnershipCommand.Assign(seg(0), "b1"))).block().epoch();
        reactor.core.publisher.Sinks.Many<io.verbatim.metadatalog.state.OwnershipTable> tables =
                reactor.core.publisher.Sinks.many().replay().latest();
        tables.tryEmitNext(register.ownership());
        LeasedOwnership b1 = new LeasedOwnership("b1", new Lease(Duration.ofSeconds(10)), clock).follow(tables.asFlux());
        List<Long> changes = new CopyOnWriteArrayList<>();
        b1.changes().subscribe(changes::add);
        b1.granted(b1.nowMs(), assigned);
        assertThat(b1.owns(T, 0)).isTrue();
        tables.tryEmitError(new IllegalStateException("the replica stopped"));
        assertThat(b1.owns(T, 0)).as("it cannot know what it lost").isFalse();
        assertThat(changes).hasSize(2);
        b1.close();
    }
}
