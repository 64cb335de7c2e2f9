package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Shape;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * The controller waits on its own node's storage ({@link Adoption}): a commit that moved a layout (an own split, a
 * peer's state folded in, a prune) is answered only once the node serves the committed epoch or a newer one; it is
 * recorded, kept and pushed as soon as it is committed, so a caller that gives up while it waits loses nothing; a
 * peer's call waits once for all it folded; a peer's answer to our call waits for nothing (nobody is answered).
 */
class AdoptionTest {
    private static final Caps CAPS = new Caps(64, 256);
    private static final Layout ONE = Layout.initial(1, 1, 0);

    private final InMemoryLayoutStore store = new InMemoryLayoutStore();
    private final Served served = new Served();
    private final Controller a = new Controller("a", Set.of("b"), CAPS, store, served, Schedulers.immediate());

    AdoptionTest() {
        store.create("t", ONE).block();
    }

    /** A node's storage as the controller sees it: the epoch it serves per topic, moved by the test; what was asked. */
    private static final class Served implements Adoption {
        final Map<String, Sinks.Many<Long>> epochs = new ConcurrentHashMap<>();
        final List<String> asked = new CopyOnWriteArrayList<>();

        private Sinks.Many<Long> of(String topic) {
            return epochs.computeIfAbsent(topic, t -> {
                Sinks.Many<Long> s = Sinks.many().replay().latest();
                s.tryEmitNext(0L);
                return s;
            });
        }

        @Override
        public Mono<Void> adopted(String topic, long epoch) {
            asked.add(topic + "@" + epoch);
            return of(topic).asFlux().filter(e -> e >= epoch).next().then();
        }

        void serve(String topic, long epoch) {
            of(topic).tryEmitNext(epoch);
        }
    }

    private static Layout split(Layout l, long id) {
        return l.apply(Mutation.split(id), l.epoch(), 0).layoutOrThrow();
    }

    @Test
    void anOwnSplitIsRecordedOnCommitAndAnsweredOnceThisNodeServesIt() {
        AtomicReference<Outcome> answer = new AtomicReference<>();
        a.split("t", 0).subscribe(answer::set);
        assertThat(served.asked).containsExactly("t@1");
        assertThat(store.get("t").block().epoch()).as("committed").isEqualTo(1);
        assertThat(answer.get()).as("not served here yet").isNull();
        assertThat(a.recentChanges("t")).as("recorded on commit").hasSize(1);

        served.serve("t", 1);
        assertThat(answer.get()).isInstanceOf(Outcome.Applied.class);
    }

    @Test
    void aCallerThatGivesUpWhileItWaitsLosesNoBookkeeping() {
        List<String> pushed = new CopyOnWriteArrayList<>();
        a.localChanges().subscribe(pushed::add);
        a.split("t", 0).subscribe().dispose(); // the caller's timeout: it cancels during the wait
        assertThat(store.get("t").block().epoch()).isEqualTo(1);
        assertThat(a.recentChanges("t")).hasSize(1);
        assertThat(pushed).as("the peers still hear of it").containsExactly("t");
    }

    @Test
    void aPeersStateIsKeptOnCommitAndAnsweredOnceItsFoldIsServedHere() {
        Layout peer = split(ONE, 0);
        ExchangeRequest push = ExchangeRequest.newBuilder().setCluster("b").addTopics(States.toProto(
                new PeerState("b", "t", 1, Shape.of(peer), Set.of(), CAPS))).build();
        AtomicReference<ExchangeResponse> answer = new AtomicReference<>();
        a.receive(push).subscribe(answer::set);
        assertThat(served.asked).containsExactly("t@1");
        assertThat(answer.get()).isNull();
        assertThat(a.heldState("t", "b")).as("kept once its fold committed").isPresent();

        served.serve("t", 1);
        assertThat(answer.get()).isNotNull();
    }

    @Test
    void aPeersCallWaitsOnceForEveryTopicItFolded() {
        store.create("u", ONE).block();
        Layout peer = split(ONE, 0);
        ExchangeRequest push = ExchangeRequest.newBuilder().setCluster("b")
                .addTopics(States.toProto(new PeerState("b", "t", 1, Shape.of(peer), Set.of(), CAPS)))
                .addTopics(States.toProto(new PeerState("b", "u", 1, Shape.of(peer), Set.of(), CAPS))).build();
        AtomicReference<ExchangeResponse> answer = new AtomicReference<>();
        a.receive(push).subscribe(answer::set);
        assertThat(served.asked).as("both folded before any wait").containsExactly("t@1", "u@1");

        served.serve("t", 1);
        assertThat(answer.get()).isNull();
        served.serve("u", 1);
        assertThat(answer.get()).isNotNull();
    }

    @Test
    void aPeersAnswerToOurCallIsFoldedWithoutWaiting() {
        Layout peer = split(ONE, 0);
        ExchangeRequest sent = ExchangeRequest.newBuilder().setCluster("a").build();
        ExchangeResponse back = ExchangeResponse.newBuilder().setCluster("b").addTopics(States.toProto(
                new PeerState("b", "t", 1, Shape.of(peer), Set.of(), CAPS))).build();
        AtomicReference<Boolean> done = new AtomicReference<>(false);
        a.onAnswer("b", sent, back).subscribe(v -> { }, e -> { }, () -> done.set(true));
        assertThat(done.get()).as("the push loop is not held up").isTrue();
        assertThat(store.get("t").block().epoch()).isEqualTo(1);
        assertThat(served.asked).isEmpty();
    }

    @Test
    void aPruneWaitsAndOneThatPrunesNothingDoesNot() {
        Layout two = split(ONE, 0);
        store.compareAndSet("t", 0, two).block();
        served.serve("t", 1);

        AtomicReference<Layout> nothing = new AtomicReference<>();
        a.prune("t", List.of(1L)).subscribe(nothing::set); // active, not sealed: nothing to prune
        assertThat(nothing.get()).isEqualTo(two);
        assertThat(served.asked).isEmpty();

        AtomicReference<Layout> pruned = new AtomicReference<>();
        a.prune("t", List.of(0L)).subscribe(pruned::set);
        assertThat(served.asked).containsExactly("t@2");
        assertThat(pruned.get()).isNull();
        served.serve("t", 5); // a newer layout (one that made epoch 2 moot) satisfies the wait
        assertThat(pruned.get().epoch()).isEqualTo(2);
        assertThat(pruned.get().segment(0)).isEmpty();
    }

    @Test
    void aRefusedChangeWaitsForNothing() {
        assertThat(a.rebucket("t", 0, 1).block()).isInstanceOf(Outcome.Refused.class); // the same count
        assertThat(served.asked).isEmpty();
    }
}
