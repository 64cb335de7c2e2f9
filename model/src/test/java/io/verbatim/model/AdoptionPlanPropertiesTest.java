package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The adoption plan over random layout histories: a storage that carries a plan out holds the next layout's
 * segments, sealed as it seals them, however many epochs the plan jumps.
 */
class AdoptionPlanPropertiesTest {

    /** A storage reduced to what a plan changes: each segment it holds, and whether it is sealed. */
    private static Map<Long, Boolean> held(Layout layout) {
        Map<Long, Boolean> held = new TreeMap<>();
        layout.segments().values().forEach(s -> held.put(s.id(), s.isSealed()));
        return held;
    }

    /** Carries {@code plan} out on {@code held}, in its order, refusing what a storage could not do. */
    private static Map<Long, Boolean> carryOut(Map<Long, Boolean> held, AdoptionPlan plan) {
        Map<Long, Boolean> out = new TreeMap<>(held);
        for (Segment s : plan.create()) {
            assertThat(out).as("made twice: %s", s.id()).doesNotContainKey(s.id());
            out.put(s.id(), false);
        }
        for (Segment s : plan.seal()) {
            assertThat(out.get(s.id())).as("sealed while missing or sealed: %s", s.id()).isFalse();
            out.put(s.id(), true);
        }
        for (Segment s : plan.prune()) {
            assertThat(out).as("pruned while missing: %s", s.id()).containsKey(s.id());
            out.remove(s.id());
        }
        return out;
    }

    /** {@code layout} after {@code steps} random mutations, some applied many at once. */
    private static Layout evolve(Random r, Layout layout, int steps) {
        for (int i = 0; i < steps; i++) {
            List<Mutation> batch = new ArrayList<>();
            Layout probe = layout;
            for (int k = r.nextInt(3) == 0 ? 1 + r.nextInt(4) : 1; k > 0; k--) {
                Mutation m = Generators.randomMutation(r, probe);
                if (probe.apply(m, probe.epoch(), i) instanceof Outcome.Applied applied) {
                    batch.add(m);
                    probe = applied.layout();
                }
            }
            if (!batch.isEmpty()) {
                layout = layout.applyAll(batch, layout.epoch(), i).layoutOrThrow();
            }
        }
        return layout;
    }

    @Test
    void carryingAPlanOutHoldsTheNextLayout() {
        Property.forAll("plan reaches next", 0xAD097L, 500, r -> {
            Layout current = evolve(r, Layout.initial(1 + r.nextInt(3), 1 << r.nextInt(4), 0), r.nextInt(8));
            Layout next = evolve(r, current, r.nextInt(8));
            assertThat(carryOut(held(current), AdoptionPlan.between(current, next))).isEqualTo(held(next));
        });
    }

    @Test
    void aPlanFromNothingHoldsTheLayout() {
        Property.forAll("plan of a new topic", 0xAD098L, 300, r -> {
            Layout layout = evolve(r, Layout.initial(1 + r.nextInt(3), 1 << r.nextInt(4), 0), r.nextInt(10));
            assertThat(carryOut(Map.of(), AdoptionPlan.of(layout))).isEqualTo(held(layout));
        });
    }

    @Test
    void planningFromALayoutToItselfIsEmpty() {
        Property.forAll("plan is idempotent", 0xAD099L, 300, r -> {
            Layout layout = evolve(r, Layout.initial(1 + r.nextInt(3), 1 << r.nextInt(4), 0), r.nextInt(10));
            assertThat(AdoptionPlan.between(layout, layout)).isEqualTo(AdoptionPlan.EMPTY);
        });
    }

    @Test
    void oneJumpEndsWhereTwoStepsEnd() {
        Property.forAll("plan jumps epochs", 0xAD09AL, 500, r -> {
            Layout first = evolve(r, Layout.initial(1 + r.nextInt(3), 1 << r.nextInt(4), 0), r.nextInt(6));
            Layout second = evolve(r, first, r.nextInt(6));
            Layout third = evolve(r, second, r.nextInt(6));
            Map<Long, Boolean> stepwise = carryOut(carryOut(held(first), AdoptionPlan.between(first, second)),
                    AdoptionPlan.between(second, third));
            assertThat(carryOut(held(first), AdoptionPlan.between(first, third))).isEqualTo(stepwise);
        });
    }

    @Test
    void parentsAreMadeBeforeTheirChildrenAndEachStepTouchesOnlyItsOwn() {
        Property.forAll("plan order", 0xAD09BL, 500, r -> {
            Layout current = evolve(r, Layout.initial(1 + r.nextInt(3), 1 << r.nextInt(4), 0), r.nextInt(8));
            Layout next = evolve(r, current, r.nextInt(8));
            AdoptionPlan plan = AdoptionPlan.between(current, next);
            Set<Long> made = new HashSet<>();
            for (Segment s : plan.create()) {
                assertThat(s).isEqualTo(next.segment(s.id()).orElseThrow());
                for (long parent : s.parentIds()) {
                    assertThat(current.segment(parent).isPresent() || made.contains(parent))
                            .as("segment %s made before its parent %s", s.id(), parent).isTrue();
                }
                made.add(s.id());
            }
            assertThat(plan.seal()).allMatch(s -> s.isSealed() && next.segment(s.id()).orElseThrow().equals(s));
            assertThat(plan.prune()).allMatch(s -> next.segment(s.id()).isEmpty()
                    && current.segment(s.id()).orElseThrow().equals(s));
            Set<Long> pruned = plan.prune().stream().map(Segment::id).collect(Collectors.toSet());
            assertThat(plan.create()).noneMatch(s -> pruned.contains(s.id()));
        });
    }
}
