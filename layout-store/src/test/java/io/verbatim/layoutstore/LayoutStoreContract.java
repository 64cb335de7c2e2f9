package io.verbatim.layoutstore;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** What every {@link LayoutStore} must do; the in-memory store and the Raft log run it alike. */
public abstract class LayoutStoreContract {
    private static final Layout ONE = Layout.initial(1, 4, 0);

    protected abstract LayoutStore newStore();

    private static Layout split(Layout l) {
        return l.apply(Mutation.split(l.activeSegments().get(0).id()), l.epoch(), 0).layoutOrThrow();
    }

    @Test
    void compareAndSetMovesOnlyFromTheExpectedEpoch() {
        LayoutStore store = newStore();
        store.create("t", ONE).block();
        Layout next = split(ONE);
        StepVerifier.create(store.compareAndSet("t", 0, next)).expectNext(next).verifyComplete();
        StepVerifier.create(store.compareAndSet("t", 0, split(ONE)))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StaleEpochException.class)
                        .hasMessageContaining("epoch 1, not the expected 0"))
                .verify();
        assertThat(store.get("t").block()).isEqualTo(next);
    }

    /** The refusals every store gives are the {@link EpochRule}'s, in its words. */
    @Test
    void refusalsAreTheEpochRules() {
        LayoutStore store = newStore();
        StepVerifier.create(store.compareAndSet("nope", 0, split(ONE)))
                .expectErrorSatisfies(e -> assertThat(e).isExactlyInstanceOf(IllegalArgumentException.class)
                        .hasMessage(EpochRule.missing("nope").reason()))
                .verify();
        store.create("t", ONE).block();
        StepVerifier.create(store.create("t", ONE))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(StaleEpochException.class)
                        .hasMessage(new EpochRule.Verdict.Stale("t", -1, 0).exception().getMessage()))
                .verify();
        Layout next = split(ONE);
        store.compareAndSet("t", 0, next).block();
        StepVerifier.create(store.compareAndSet("t", next.epoch(), next))
                .expectErrorSatisfies(e -> assertThat(e).isExactlyInstanceOf(IllegalArgumentException.class)
                        .hasMessage(EpochRule.notForward("t", next.epoch(), next.epoch()).orElseThrow().reason()))
                .verify();
        assertThat(store.get("t").block()).isEqualTo(next);
    }

    @Test
    void aTopicIsCreatedOnceAndAnUnknownOneIsEmpty() {
        LayoutStore store = newStore();
        store.create("t", ONE).block();
        StepVerifier.create(store.create("t", ONE)).expectError(StaleEpochException.class).verify();
        StepVerifier.create(store.get("nope")).verifyComplete();
        StepVerifier.create(store.topics()).expectNext("t").verifyComplete();
    }

    @Test
    void watchersSeeTheLatestThenEveryNewerLayout() {
        LayoutStore store = newStore();
        store.create("t", ONE).block();
        Layout next = split(ONE);
        StepVerifier.create(store.watch("t").take(2))
                .expectNext(ONE)
                .then(() -> store.compareAndSet("t", 0, next).block())
                .expectNext(next)
                .verifyComplete();
    }

    @Test
    void updateRereadsAndReplansOnAConflict() {
        LayoutStore store = newStore();
        store.create("t", ONE).block();
        AtomicInteger plans = new AtomicInteger();
        Layout result = store.update("t", current -> {
            if (plans.getAndIncrement() == 0) {
                store.compareAndSet("t", current.epoch(), split(current)).block(); // someone else got there first
            }
            return List.of(Mutation.rebucket(current.activeSegments().get(0).id(), 16));
        }, 0).block(Duration.ofSeconds(5));
        assertThat(plans.get()).isEqualTo(2);
        assertThat(result.epoch()).isEqualTo(2);
        assertThat(result.activeSegments()).hasSize(2);
    }
}
