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
 * peer's state folded in, a prune) is answered, recorded and kept only once the node serves the committed epoch or a
 * newer one; a commit that moved nothing waits for nothing.
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
    void anOwnSplitIsAnsweredAndRecordedOnceThisNodeServesIt() {
        AtomicReference<Outcome> answer = new AtomicReference<>();
        a.split("t", 0).subscribe(answer::set);
        assertThat(served.asked).containsExactly("t@1");
        assertThat(store.get("t").block().epoch()).as("committed").isEqualTo(1);
        assertThat(answer.get()).as("not served here yet").isNull();
        assertThat(a.recentChanges("t")).isEmpty();

        served.serve("t", 1);
        assertThat(answer.get()).isInstanceOf(Outcome.Applied.class);
        assertThat(a.recentChanges("t")).hasSize(1);
    }

    @Test
    void aPeersStateIsKeptAndAnsweredOnceItsFoldIsServedHere() {
        Layout peer = split(ONE, 0);
        ExchangeRequest push = ExchangeRequest.newBuilder().setCluster("b").addTopics(States.toProto(
                new PeerState("b", "t", 1, Shape.of(peer), Set.of(), CAPS))).build();
        AtomicReference<ExchangeResponse> answer = new AtomicReference<>();
        a.receive(push).subscribe(answer::set);
        assertThat(served.asked).containsExactly("t@1");
        assertThat(answer.get()).isNull();
        assertThat(a.heldState("t", "b")).as("kept once its fold is served").isEmpty();

        served.serve("t", 1);
        assertThat(answer.get()).isNotNull();
        assertThat(a.heldState("t", "b")).isPresent();
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
