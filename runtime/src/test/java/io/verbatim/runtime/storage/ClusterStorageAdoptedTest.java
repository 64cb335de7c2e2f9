package io.verbatim.runtime.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * What a commit waits on to read its own write: {@link ClusterStorage#adopted} ends once the topic's storage holds the
 * epoch or a newer one (one adopted past a skipped layout satisfies it), at once for a topic not open, at close, and
 * after its patience at most. Never an error. Time is virtual.
 */
class ClusterStorageAdoptedTest {
    private static final VerbatimConfig CONFIG = VerbatimConfig.parse("""
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: t}]
            """);
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private final VirtualTimeScheduler timer = VirtualTimeScheduler.create();
    private final ClusterStorage storage = new ClusterStorage(CONFIG, "a", List.of("b"), timer);
    private final Layout zero = Layout.initial(1, 1, 0);
    private final TopicStorage t = storage.open("t", zero, "clusters[0]");

    @AfterEach
    void stop() {
        storage.close();
        timer.dispose();
    }

    private static Layout split(Layout l) {
        return l.apply(Mutation.split(l.activeSegments().get(0).id()), l.epoch(), 0).layoutOrThrow();
    }

    private AtomicBoolean waitFor(String topic, long epoch) {
        AtomicBoolean done = new AtomicBoolean();
        storage.adopted(topic, epoch, PATIENCE).subscribe(v -> { }, e -> { }, () -> done.set(true));
        return done;
    }

    @Test
    void anEpochHeldOrATopicNotOpenIsThereAtOnce() {
        assertThat(waitFor("t", 0)).isTrue();
        assertThat(waitFor("elsewhere", 7)).isTrue();
    }

    @Test
    void aWaitEndsWhenTheStorageTakesTheEpochOrANewerOne() {
        Layout one = split(zero);
        Layout two = split(one);
        AtomicBoolean forOne = waitFor("t", 1);
        AtomicBoolean forTwo = waitFor("t", 2);
        assertThat(forOne).isFalse();

        // epoch 1 skipped (a newer one made it moot): epoch 2 held satisfies both
        assertThat(t.adopt(two).block()).isTrue();
        timer.advanceTime(); // what follows goes on off the adopting thread: on the timer
        assertThat(forOne).isTrue();
        assertThat(forTwo).isTrue();
    }

    @Test
    void aWaitEndsAfterItsPatienceOrAtCloseWithoutAnError() {
        AtomicBoolean patient = waitFor("t", 1);
        timer.advanceTimeBy(PATIENCE.minusMillis(1));
        assertThat(patient).isFalse();
        timer.advanceTimeBy(Duration.ofMillis(1));
        assertThat(patient).isTrue();

        AtomicBoolean closing = waitFor("t", 1);
        assertThat(closing).isFalse();
        storage.close();
        assertThat(closing).isTrue();
    }
}
