package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipCommand.Assign;
import io.verbatim.metadatalog.state.OwnershipCommand.Expire;
import io.verbatim.metadatalog.state.OwnershipCommand.Move;
import io.verbatim.metadatalog.state.OwnershipLog;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.metadatalog.server.ReplicatedLog;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

class OwnershipPlannerTest {
    private static final String T = "persistent://public/default/t";
    private final LayoutRegister register = new LayoutRegister();
    private final ReplicatedLog log = new DirectLog(register);
    private final OwnershipLog ownership = new OwnershipLog(log, register, Schedulers.immediate());
    private final RaftLayoutStore layouts = new RaftLayoutStore(log, register, Schedulers.immediate());
    private final Map<SegmentKey, Long> load = new HashMap<>();
    private final OwnershipPlanner planner = new OwnershipPlanner(new OwnershipPlanner.Settings(2,
            Duration.ofSeconds(10), Duration.ofSeconds(30), 0.25));

    private void members(String... ids) {
        for (String id : ids) {
            ownership.register(RegisteredMember.configured(id, RegisteredMember.State.ACTIVE)).block();
        }
    }

    private List<OwnershipCommand> plan(Set<String> live, Set<String> lapsed, long now) {
        TreeMap<String, Layout> all = new TreeMap<>();
        register.topics().forEach(t -> all.put(t, register.get(t).orElseThrow()));
        return planner.plan(new OwnershipPlanner.Inputs(ownership.local(), all, live, lapsed, load, now));
    }

    private List<OwnershipCommand> planAndApply(Set<String> live, Set<String> lapsed, long now) {
        List<OwnershipCommand> commands = plan(live, lapsed, now);
        if (!commands.isEmpty()) {
            assertThat(ownership.change(commands).block().refused()).isEmpty();
        }
        return commands;
    }

    private static SegmentKey seg(long id) {
        return new SegmentKey(T, id);
    }

    @Test
    void unownedSegmentsGoToTheLeastLoadedLiveMemberAndASplitsChildrenToTheirParentsOwner() {
        layouts.create(T, Layout.initial(3, 1, 0)).block();
        members("b1", "b2");
        assertThat(planAndApply(Set.of("b1", "b2"), Set.of(), 0))
                .containsExactly(new Assign(seg(0), "b1"), new Assign(seg(1), "b2"), new Assign(seg(2), "b1"));
        Layout layout = register.get(T).orElseThrow();
        layouts.compareAndSet(T, layout.epoch(), layout.apply(Mutation.split(1), layout.epoch(), 0).layoutOrThrow())
                .block();
        assertThat(plan(Set.of("b1", "b2"), Set.of(), 1_000))
                .as("both children of b2's segment 1 go to b2, though b2 then carries more")
                .containsExactly(new Assign(seg(3), "b2"), new Assign(seg(4), "b2"));
        assertThat(plan(Set.of("b1"), Set.of(), 1_000)).as("b2's lease does not hold: not a candidate")
                .containsExactly(new Assign(seg(3), "b1"), new Assign(seg(4), "b1"));
    }

    @Test
    void aLapsedOwnerIsExpiredAndItsSegmentsGivenAwayInTheSameChangeAndItGetsThemBackWhenLiveAgain() {
        layouts.create(T, Layout.initial(2, 1, 0)).block();
        members("b1", "b2", "b3");
        ownership.change(List.of(new Assign(seg(0), "b1"), new Assign(seg(1), "b2"))).block();
        assertThat(plan(Set.of("b2", "b3"), Set.of("b3"), 0)).as("b3 holds nothing: no expiry written").isEmpty();
        assertThat(planAndApply(Set.of("b2", "b3"), Set.of("b1"), 0))
                .containsExactly(new Expire("b1"), new Assign(seg(0), "b3"));
        ownership.change(List.of(new Expire("b3"))).block();
        assertThat(plan(Set.of("b2", "b3"), Set.of(), 0)).as("the expired owner, live again, is preferred")
                .containsExactly(new Assign(seg(0), "b3"));
        assertThat(plan(Set.of(), Set.of("b2"), 0)).as("nobody live: only the expiry")
                .containsExactly(new Expire("b2"));
    }

    @Test
    void aDrainingMembersSegmentsMoveAwayUncountedAndBalancingMovesAreBoundedAndRespectTenure() {
        layouts.create(T, Layout.initial(6, 1, 0)).block();
        members("b1", "b2", "b3");
        List<OwnershipCommand> all = new java.util.ArrayList<>();
        for (long s = 0; s < 6; s++) {
            all.add(new Assign(seg(s), "b1"));
        }
        ownership.change(all).block();
        long now = 100_000;
        List<OwnershipCommand> first = plan(Set.of("b1", "b2", "b3"), Set.of(), now);
        assertThat(first).as("at most 2 moves per 10 s").hasSize(2).allMatch(c -> c instanceof Move);
        assertThat(first).extracting(c -> ((Move) c).to()).containsExactly("b2", "b3");
        assertThat(plan(Set.of("b1", "b2", "b3"), Set.of(), now + 5_000)).as("the window is spent").isEmpty();
        assertThat(plan(Set.of("b1", "b2", "b3"), Set.of(), now + 10_000)).hasSize(2);

        ownership.register(RegisteredMember.configured("b1", RegisteredMember.State.DRAINING)).block();
        List<OwnershipCommand> drain = plan(Set.of("b1", "b2", "b3"), Set.of(), now + 10_000);
        assertThat(drain).as("every segment of the draining member, the window spent or not").hasSize(6)
                .allMatch(c -> c instanceof Move m && !m.to().equals("b1"));
        Map<String, Long> to = new TreeMap<>();
        drain.forEach(c -> to.merge(((Move) c).to(), 1L, Long::sum));
        assertThat(to).containsEntry("b2", 3L).containsEntry("b3", 3L);
    }

    @Test
    void theSegmentThatBringsTheTwoClosestMovesAndEqualLoadsDoNotSwap() {
        layouts.create(T, Layout.initial(4, 1, 0)).block();
        members("b1", "b2");
        ownership.change(List.of(new Assign(seg(0), "b1"), new Assign(seg(1), "b1"), new Assign(seg(2), "b1"),
                new Assign(seg(3), "b2"))).block();
        load.put(seg(0), 900L);
        load.put(seg(1), 300L);
        load.put(seg(2), 100L);
        load.put(seg(3), 100L);
        assertThat(plan(Set.of("b1", "b2"), Set.of(), 100_000))
                .as("1303 against 101: 300 and 900 narrow it alike, the lighter goes; then 1002 against 402: 100")
                .containsExactly(new Move(seg(1), 4, "b2"), new Move(seg(2), 4, "b2"));
        OwnershipPlanner fresh = new OwnershipPlanner(OwnershipPlanner.Settings.DEFAULTS);
        load.clear();
        TreeMap<String, Layout> all = new TreeMap<>(Map.of(T, register.get(T).orElseThrow()));
        ownership.change(List.of(new Move(seg(2), 4, "b2"))).block();
        ownership.change(List.of(new OwnershipCommand.Release(seg(2), 5, "b1"))).block();
        assertThat(fresh.plan(new OwnershipPlanner.Inputs(ownership.local(), all, new TreeSet<>(Set.of("b1", "b2")),
                Set.of(), load, 100_000))).as("2 and 2 segments: balanced").isEmpty();
    }
}
