package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.exchange.proto.Cell;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.TopicState;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Shape;
import io.verbatim.store.InMemoryLayoutStore;
import java.util.Set;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class ControllerTest {
    private static final Caps CAPS = new Caps(64, 256);
    private static final Layout ONE = Layout.initial(1, 1, 0);

    private final InMemoryLayoutStore store = new InMemoryLayoutStore();
    private final Controller a = new Controller("a", Set.of("b", "c"), CAPS, store, Schedulers.immediate());

    ControllerTest() {
        store.create("t", ONE).block();
    }

    private static ExchangeRequest push(String from, Layout layout, long epoch) {
        TopicState state = States.toProto(new PeerState(from, "t", epoch, Shape.of(layout), Set.of(), CAPS));
        return ExchangeRequest.newBuilder().setCluster(from).addTopics(state).build();
    }

    private static Layout split(Layout l, long id) {
        return l.apply(Mutation.split(id), l.epoch(), 0).layoutOrThrow();
    }

    @Test
    void foldsCommitsAndOnlyThenAnswersWithItsOwnState() {
        Layout peer = split(ONE, 0);
        StepVerifier.create(a.receive(push("b", peer, 1)))
                .assertNext(answer -> {
                    assertThat(answer.getCluster()).isEqualTo("a");
                    // The answer already carries the folded layout: committed before answering.
                    assertThat(answer.getTopics(0).getCellsCount()).isEqualTo(2);
                })
                .verifyComplete();
        assertThat(Shape.of(store.get("t").block())).isEqualTo(Shape.of(peer));
        assertThat(a.hasAnswered("b")).isTrue();
    }

    @Test
    void statesOfClustersOutsideTheReplicationSetAreRefusedAndIgnored() {
        StepVerifier.create(a.receive(push("z", split(ONE, 0), 1)))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(ExchangeException.class, x -> {
                    assertThat(x.status()).isEqualTo(403);
                    assertThat(x.getMessage()).contains("'z' is not in the replication set");
                }))
                .verify();
        assertThat(store.get("t").block()).isEqualTo(ONE);
    }

    @Test
    void anOlderEpochNeverReplacesANewerStateAndChangesNothing() {
        a.receive(push("b", split(ONE, 0), 5)).block();
        Layout before = store.get("t").block();
        StepVerifier.create(a.receive(push("b", ONE, 3)))
                .expectErrorSatisfies(e -> assertThat(((ExchangeException) e).status()).isEqualTo(409))
                .verify();
        assertThat(store.get("t").block()).isEqualTo(before);
        assertThat(a.peerStatesView().get("t").get("b").epoch()).isEqualTo(5);
    }

    @Test
    void aLayoutThatDoesNotTileIsRefusedWithItsProblemNamedAndNothingKept() {
        TopicState gap = TopicState.newBuilder().setTopic("t").setEpoch(1)
                .setCaps(io.verbatim.exchange.proto.Caps.newBuilder().setMaxSegments(8).setMaxEntryBucketsPerSegment(8))
                .addCells(Cell.newBuilder().setStart(0).setEnd(100).setBuckets(1))
                .addCells(Cell.newBuilder().setStart(200).setEnd(65535).setBuckets(1)).build();
        TopicState good = States.toProto(new PeerState("b", "u", 1, Shape.of(ONE), Set.of(), CAPS));
        ExchangeRequest bad = ExchangeRequest.newBuilder().setCluster("b").addTopics(good).addTopics(gap).build();
        StepVerifier.create(a.receive(bad))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(ExchangeException.class, x -> {
                    assertThat(x.status()).isEqualTo(400);
                    assertThat(x.getMessage()).contains("topic 't' from b", "gap at 0065");
                }))
                .verify();
        assertThat(a.peerStatesView()).as("the good topic of the same call is not kept either").isEmpty();
        TopicState offRing = gap.toBuilder().setCells(1, Cell.newBuilder().setStart(101).setEnd(70000).setBuckets(1))
                .build();
        StepVerifier.create(a.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(offRing).build()))
                .expectErrorMessage("topic 't' from b: cell [101, 70000] is outside the ring 0..65535").verify();
    }

    @Test
    void aNewLeaderDefersItsOwnChangesUntilItHoldsEveryPeersState() {
        a.becomeLeader();
        assertThat(a.split("t", 0).block()).isInstanceOf(Outcome.Refused.class);
        a.receive(push("b", ONE, 0)).block();
        assertThat(a.deferringOwnChanges()).isTrue();
        a.receive(push("c", ONE, 0)).block();
        assertThat(a.deferringOwnChanges()).isFalse();
        assertThat(a.split("t", 0).block()).isInstanceOf(Outcome.Applied.class);
    }

    @Test
    void ownChangesStayWithinTheEffectiveCaps() {
        a.receive(push("b", ONE, 0)).block();
        Controller tight = new Controller("a", Set.of("b"), new Caps(2, 2), store, Schedulers.immediate());
        assertThat(tight.split("t", 0).block()).isInstanceOf(Outcome.Applied.class);
        long lower = store.get("t").block().activeSegments().get(0).id();
        assertThat(tight.split("t", lower).block()).isInstanceOf(Outcome.Refused.class);
        assertThat(tight.rebucket("t", lower, 4).block()).isInstanceOf(Outcome.Refused.class);
        assertThat(tight.rebucket("t", lower, 2).block()).isInstanceOf(Outcome.Applied.class);
    }

    @Test
    void theExchangeGateOpensOnAnAnswerAndReportsAPeerWithoutTheEndpoint() {
        StepVerifier.create(a.awaitAnswer("b")).then(() -> a.receive(push("b", ONE, 0)).block())
                .expectNext(true).verifyComplete();
        a.failed("c", new ExchangeException(404, "no such endpoint"));
        StepVerifier.create(a.awaitAnswer("c")).expectNext(false).verifyComplete();
        assertThat(a.isUnsupported("c")).isTrue();
    }
}
