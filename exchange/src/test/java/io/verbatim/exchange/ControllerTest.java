package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.exchange.proto.Cell;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.exchange.proto.TopicResult;
import io.verbatim.exchange.proto.TopicState;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class ControllerTest {
    private static final Caps CAPS = new Caps(64, 256);
    private static final Layout ONE = Layout.initial(1, 1, 0);

    private final InMemoryLayoutStore store = new InMemoryLayoutStore();
    private final Controller a = new Controller("a", Set.of("b", "c"), CAPS, store, Schedulers.immediate());

    ControllerTest() {
        store.create("t", ONE).block();
    }

    private static TopicState state(String from, String topic, Layout layout, long epoch) {
        return States.toProto(new PeerState(from, topic, epoch, Shape.of(layout), Set.of(), CAPS));
    }

    private static ExchangeRequest push(String from, Layout layout, long epoch) {
        return ExchangeRequest.newBuilder().setCluster(from).addTopics(state(from, "t", layout, epoch)).build();
    }

    private static Layout split(Layout l, long id) {
        return l.apply(Mutation.split(id), l.epoch(), 0).layoutOrThrow();
    }

    private static TopicResult resultOf(ExchangeResponse answer, String topic) {
        return answer.getResultsList().stream().filter(r -> r.getTopic().equals(topic)).findFirst().orElseThrow();
    }

    @Test
    void foldsCommitsAndOnlyThenAnswersWithItsOwnState() {
        Layout peer = split(ONE, 0);
        StepVerifier.create(a.receive(push("b", peer, 1)))
                .assertNext(answer -> {
                    assertThat(answer.getCluster()).isEqualTo("a");
                    // The answer already carries the folded layout: committed before answering.
                    assertThat(answer.getTopics(0).getCellsCount()).isEqualTo(2);
                    assertThat(resultOf(answer, "t").getCode()).isEqualTo(TopicResult.Code.ACCEPTED);
                    assertThat(answer.getMaxBodyBytes()).isEqualTo(ExchangeConfig.defaults().maxBodyBytes());
                })
                .verifyComplete();
        assertThat(Shape.of(store.get("t").block())).isEqualTo(Shape.of(peer));
        assertThat(a.hasAnswered("b")).isTrue();
    }

    @Test
    void aChangeIsRecordedWithTheTimeItWasCommittedOnTheControllersClock() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        InMemoryLayoutStore timed = new InMemoryLayoutStore();
        timed.create("t", ONE).block();
        Controller c = new Controller("a", Set.of("b"), CAPS, timed, clock);
        clock.advanceTimeBy(Duration.ofSeconds(42));
        StepVerifier.create(c.receive(push("b", split(ONE, 0), 1))).expectNextCount(1).verifyComplete();
        clock.advanceTimeBy(Duration.ofSeconds(3));
        c.split("t", 1).block();

        List<LayoutChange> changes = c.recentChanges("t");
        assertThat(changes).extracting(LayoutChange::atMillis).containsExactly(42_000L, 45_000L);
        assertThat(changes.get(0).toString()).isEqualTo("epoch 1: split 0000-ffff-0 (" + changes.get(0).why() + ")");
        assertThat(changes.get(1).why()).isEqualTo("own");
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
    void anOlderEpochNeverReplacesANewerStateAndDoesNotRefuseTheOtherTopics() {
        store.create("u", ONE).block();
        a.receive(push("b", split(ONE, 0), 5)).block();
        Layout before = store.get("t").block();
        ExchangeRequest mixed = ExchangeRequest.newBuilder().setCluster("b").addTopics(state("b", "t", ONE, 3))
                .addTopics(state("b", "u", split(ONE, 0), 1)).build();
        ExchangeResponse answer = a.receive(mixed).block();
        assertThat(resultOf(answer, "t").getCode()).isEqualTo(TopicResult.Code.STALE);
        assertThat(resultOf(answer, "t").getHeldEpoch()).isEqualTo(5);
        assertThat(resultOf(answer, "u").getCode()).isEqualTo(TopicResult.Code.ACCEPTED);
        assertThat(store.get("t").block()).isEqualTo(before);
        assertThat(a.peerStatesView().get("t").get("b").epoch()).isEqualTo(5);
        assertThat(store.get("u").block().activeSegments()).hasSize(2);
    }

    @Test
    void aLayoutThatDoesNotTileIsRefusedWithItsProblemNamedAndOnlyItIsLeftOut() {
        TopicState gap = TopicState.newBuilder().setTopic("t").setEpoch(1)
                .setCaps(io.verbatim.exchange.proto.Caps.newBuilder().setMaxSegments(8).setMaxEntryBucketsPerSegment(8))
                .addCells(Cell.newBuilder().setStart(0).setEnd(100).setBuckets(1))
                .addCells(Cell.newBuilder().setStart(200).setEnd(65535).setBuckets(1)).build();
        StepVerifier.create(a.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(gap).build()))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(ExchangeException.class, x -> {
                    assertThat(x.status()).isEqualTo(400);
                    assertThat(x.getMessage()).contains("topic 't' from b", "gap at 0065");
                }))
                .verify();
        assertThat(a.peerStatesView()).as("nothing kept").isEmpty();
        TopicState offRing = gap.toBuilder().setCells(1, Cell.newBuilder().setStart(101).setEnd(70000).setBuckets(1))
                .build();
        StepVerifier.create(a.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(offRing).build()))
                .expectErrorMessage("topic 't' from b: cell [101, 70000] is outside the ring 0..65535").verify();
        TopicState threeBuckets = gap.toBuilder().setCells(1, Cell.newBuilder().setStart(101).setEnd(65535)
                .setBuckets(3)).build();
        StepVerifier.create(a.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(threeBuckets).build()))
                .expectErrorMessage("topic 't' from b: bucket count 3 is not a power of two").verify();

        store.create("u", ONE).block();
        ExchangeRequest mixed = ExchangeRequest.newBuilder().setCluster("b").addTopics(gap)
                .addTopics(state("b", "u", split(ONE, 0), 1)).build();
        ExchangeResponse answer = a.receive(mixed).block();
        assertThat(resultOf(answer, "t").getCode()).isEqualTo(TopicResult.Code.INVALID);
        assertThat(resultOf(answer, "t").getDetail()).contains("gap at 0065");
        assertThat(resultOf(answer, "u").getCode()).isEqualTo(TopicResult.Code.ACCEPTED);
        assertThat(a.peerStatesView()).containsOnlyKeys("u");
    }

    @Test
    void aStateOfATopicNotHeldHereIsNamedAndNotKept() {
        ExchangeResponse answer = a.receive(ExchangeRequest.newBuilder().setCluster("b")
                .addTopics(state("b", "elsewhere", ONE, 0)).build()).block();
        assertThat(resultOf(answer, "elsewhere").getCode()).isEqualTo(TopicResult.Code.UNKNOWN_TOPIC);
        assertThat(a.peerStatesView()).isEmpty();
    }

    @Test
    void aStateWhoseFoldFailedIsNotKept() {
        LayoutStore failing = new FailingStore(store, "t");
        Controller c = new Controller("a", Set.of("b"), CAPS, failing, Schedulers.immediate());
        ExchangeResponse answer = c.receive(push("b", split(ONE, 0), 1)).block();
        assertThat(resultOf(answer, "t").getCode()).isEqualTo(TopicResult.Code.FAILED);
        assertThat(resultOf(answer, "t").getDetail()).contains("store is down");
        assertThat(c.peerStatesView()).isEmpty();
        assertThat(c.metrics().foldFailures()).isEqualTo(1);
    }

    /** Defect 6: a cluster that lost its store came back at a lower epoch and was refused for good. */
    @Test
    void aClusterThatComesBackBehindIsTakenBackWhateverItLost() {
        Controller b = new Controller("b", Set.of("a"), CAPS, new InMemoryLayoutStore(), Schedulers.immediate());
        a.receive(push("b", split(split(ONE, 0), 1), 8)).block(); // b's old life, epoch 8
        b.store().create("t", ONE).block(); // b restarted with nothing: epoch 0
        ExchangeRequest first = b.stateFor("a").block();
        ExchangeResponse answer = a.receive(first).block();
        assertThat(resultOf(answer, "t").getCode()).isEqualTo(TopicResult.Code.STALE);
        StepVerifier.create(b.onAnswer("a", first, answer)).verifyComplete();
        assertThat(b.retryTopics("a")).as("sent again on its own, not by failing the call").containsExactly("t");
        // b folded a's state meanwhile; its next push supersedes what a holds of its old life.
        ExchangeRequest again = b.stateFor("a").block();
        assertThat(again.getTopics(0).getSupersedesEpoch()).isEqualTo(8);
        ExchangeResponse taken = a.receive(again).block();
        assertThat(resultOf(taken, "t").getCode()).isEqualTo(TopicResult.Code.ACCEPTED);
        assertThat(a.peerStatesView().get("t").get("b").epoch()).isEqualTo(again.getTopics(0).getEpoch());
        StepVerifier.create(b.onAnswer("a", again, taken)).verifyComplete();
        assertThat(b.retryTopics("a")).isEmpty();
        assertThat(Shape.of(b.store().get("t").block())).isEqualTo(Shape.of(store.get("t").block()));
        assertThat(b.statesFor("a", List.of("t")).block().getTopics(0).hasSupersedesEpoch()).isFalse();
    }

    /** Defect 7: one accepted state at epoch 2^63-1 made every later push of the real peer a 409. */
    @Test
    void anEpochCannotPinAPeer() {
        a.receive(push("b", ONE, Long.MAX_VALUE)).block();
        Controller b = new Controller("b", Set.of("a"), CAPS, new InMemoryLayoutStore(), Schedulers.immediate());
        b.store().create("t", split(ONE, 0)).block();
        ExchangeRequest real = b.stateFor("a").block();
        ExchangeResponse answer = a.receive(real).block();
        b.onAnswer("a", real, answer).onErrorResume(e -> Mono.empty()).block();
        ExchangeResponse second = a.receive(b.stateFor("a").block()).block();
        assertThat(resultOf(second, "t").getCode()).isEqualTo(TopicResult.Code.ACCEPTED);
        assertThat(store.get("t").block().activeSegments()).hasSize(2);
    }

    @Test
    @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aStateOfEveryOneHashCellFoldsWithoutHoldingTheThread() {
        List<Shape.Cell> cells = new ArrayList<>();
        for (int h = 0; h <= HashRange.MAX_HASH; h++) {
            cells.add(new Shape.Cell(HashRange.of(h, h), Buckets.ONE));
        }
        Caps wide = new Caps(1 << 16, 256);
        Controller c = new Controller("a", Set.of("b"), wide, store, Schedulers.immediate());
        TopicState huge = States.toProto(new PeerState("b", "t", 1, new Shape(cells), Set.of(), wide));
        assertThat(huge.getSerializedSize()).isGreaterThan(300_000);
        ExchangeResponse answer = c.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(huge).build())
                .block();
        assertThat(resultOf(answer, "t").getCode()).isEqualTo(TopicResult.Code.ACCEPTED);
        assertThat(store.get("t").block().activeSegments()).hasSize(1 << 16);
    }

    @Test
    void aNewLeaderDefersItsOwnChangesUntilItHoldsEveryPeersState() {
        a.becomeLeader();
        assertThat(a.split("t", 0).block()).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.DEFERRED));
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
        assertThat(tight.split("t", lower).block()).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.EXCEEDS_CAPS));
        assertThat(tight.rebucket("t", lower, 4).block()).isInstanceOf(Outcome.Refused.class);
        assertThat(tight.rebucket("t", lower, 2).block()).isInstanceOf(Outcome.Applied.class);
        long rolled = store.get("t").block().activeSegments().get(0).id();
        assertThat(tight.rebucket("t", rolled, 3).block()).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.INVALID_BUCKET_COUNT));
    }

    @Test
    void aSplitThatWouldTakeTheJoinWithThePeersPastTheCapIsRefused() {
        Controller tight = new Controller("a", Set.of("b"), new Caps(3, 8), store, Schedulers.immediate());
        // b holds 0x4000 and 0x8000 already: splitting 8000-ffff here would make four segments once folded.
        tight.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(States.toProto(new PeerState("b", "t", 2,
                Shape.of(split(split(ONE, 0), 1)), Set.of(), new Caps(3, 8)))).build()).block();
        long upper = store.get("t").block().activeSegmentFor(0x8000).id();
        assertThat(tight.split("t", upper).block()).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.message()).contains("4 segments, above the effective cap of 3"));
    }

    /** Defect 8: concurrent changes that met on the stored epoch answered 500 with a StaleEpochException. */
    @Test
    void concurrentOwnChangesReplanInsteadOfFailing() {
        Controller busy = new Controller("a", Set.of(), CAPS, store, Schedulers.parallel());
        List<Outcome> outcomes = Flux.range(0, 200).flatMap(i -> Mono.defer(() -> {
            Layout now = store.get("t").block();
            var active = now.activeSegments();
            long id = active.get(i % active.size()).id();
            return i % 3 == 0 ? busy.rebucket("t", id, 2 << (i % 4)) : busy.split("t", id);
        }).subscribeOn(Schedulers.parallel()), 16).collectList().block(Duration.ofSeconds(60));
        assertThat(outcomes).hasSize(200).allSatisfy(o -> {
            if (o instanceof Outcome.Refused r) {
                assertThat(r.reason()).isNotEqualTo(Outcome.Refusal.STALE_EPOCH);
            }
        });
        assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Applied).isNotEmpty();
        assertThat(store.get("t").block().activeSegments()).hasSizeLessThanOrEqualTo(64);
    }

    /**
     * CI, issue 12: a fold whose commit answers late (a Raft commit returns on another thread) while a second
     * fold of the topic reads the committed layout and plans nothing lost the change's record — the folds
     * shared one slot for their plans.
     */
    @Test
    void aFoldThatCommitsWhileAnotherFoldsTheSameTopicStillRecordsItsChange() {
        InMemoryLayoutStore inner = new InMemoryLayoutStore();
        inner.create("t", ONE).block();
        Sinks.Empty<Void> answer = Sinks.empty();
        LayoutStore late = new LayoutStore() {
            public Mono<Layout> get(String topic) {
                return inner.get(topic);
            }

            public Mono<Layout> create(String topic, Layout initial) {
                return inner.create(topic, initial);
            }

            public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
                return inner.compareAndSet(topic, expectedEpoch, next).delayUntil(l -> answer.asMono());
            }

            public Flux<Layout> watch(String topic) {
                return inner.watch(topic);
            }

            public Flux<String> topics() {
                return inner.topics();
            }
        };
        Controller c = new Controller("a", Set.of("b", "c"), CAPS, late, Schedulers.immediate());
        Layout peer = split(ONE, 0);
        Mono<ExchangeResponse> first = c.receive(push("b", peer, 1)).cache();
        first.subscribe(); // committed, its answer held
        assertThat(inner.get("t").block().epoch()).isEqualTo(1);
        c.receive(push("c", peer, 1)).block(Duration.ofSeconds(5)); // reads the split, plans nothing
        answer.tryEmitEmpty();
        first.block(Duration.ofSeconds(5));

        assertThat(c.recentChanges("t")).singleElement().satisfies(change -> {
            assertThat(change.epoch()).isEqualTo(1);
            assertThat(change.what()).startsWith("split");
        });
    }

    /**
     * Issue 12 review: a replica taking over after another replica led offers no cold mark of an earlier term,
     * and versions its state above every version an earlier leader offered, so peers never hold it stale.
     */
    @Test
    void aReplicaTakingOverAfreshDropsItsOwnMarksAndVersionsAboveEarlierLeaders() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        clock.advanceTimeBy(Duration.ofSeconds(100));
        InMemoryLayoutStore shared = new InMemoryLayoutStore();
        shared.create("t", Layout.initial(2, 1, 0)).block();
        Controller early = new Controller("a", Set.of("b"), CAPS, shared, clock); // started first
        clock.advanceTimeBy(Duration.ofSeconds(50));
        Controller later = new Controller("a", Set.of("b"), CAPS, shared, clock); // started later, led first
        later.markCold("t", 0x8000).block();
        long ledWith = later.stateFor("b").block().getTopics(0).getMarksVersion();
        early.markCold("t", 0x8000).block(); // a mark of an earlier term of its own
        clock.advanceTimeBy(Duration.ofSeconds(1));

        early.becomeLeaderAfresh();
        TopicState offered = early.stateFor("b").block().getTopics(0);
        assertThat(offered.getColdMarksList()).isEmpty();
        assertThat(offered.getMarksVersion()).isGreaterThan(ledWith);
        assertThat(early.deferringOwnChanges()).isTrue();
    }

    /** Defect 3: one 404 latched a remote as unsupported forever. */
    @Test
    void theExchangeVerdictIsReevaluatedOnEveryCall() {
        StepVerifier.create(a.awaitAnswer("b")).then(() -> a.receive(push("b", ONE, 0)).block())
                .expectNext(true).verifyComplete();
        a.failed("c", new ExchangeException(404, "no such endpoint"));
        StepVerifier.create(a.awaitAnswer("c")).expectNext(false).verifyComplete();
        assertThat(a.isUnsupported("c")).isTrue();
        StepVerifier.create(a.verdicts("c")).expectNext(false)
                .then(() -> a.receive(push("c", ONE, 0)).block())
                .expectNext(true).thenCancel().verify();
        assertThat(a.isUnsupported("c")).isFalse();
    }

    @Test
    void aManualMarkIsWithdrawnAndAPolicyMarkIsReplacedOnEveryEvaluation() {
        a.markCold("t", 0x8000).block();
        assertThat(a.coldMarks("t")).containsExactly(0x8000);
        assertThat(a.unmarkCold("t", 0x8000)).isTrue();
        assertThat(a.coldMarks("t")).isEmpty();
        a.policyColdMarks("t", Set.of(0x4000, 0x8000)).block();
        assertThat(a.coldMarks("t")).containsExactlyInAnyOrder(0x4000, 0x8000);
        a.policyColdMarks("t", Set.of(0x8000)).block();
        assertThat(a.coldMarks("t")).as("0x4000 turned hot").containsExactly(0x8000);
    }

    /** A call and an answer of the same peer may cross: the older state never replaces the newer. */
    @Test
    void aStateNeverGoesBackWhenACallAndAnAnswerCross() {
        Controller b = new Controller("b", Set.of("a"), CAPS, new InMemoryLayoutStore(), Schedulers.immediate());
        b.store().create("t", ONE).block();
        a.receive(push("b", split(ONE, 0), 6)).block(); // b's newer state came in a call
        ExchangeRequest older = push("b", ONE, 5);
        ExchangeResponse crossed = ExchangeResponse.newBuilder().setCluster("b").addTopics(older.getTopics(0))
                .build();
        Controller c = new Controller("a", Set.of("b"), CAPS, store, Schedulers.immediate());
        c.receive(push("b", split(ONE, 0), 6)).block();
        c.onAnswer("b", ExchangeRequest.newBuilder().setCluster("a").build(), crossed).block();
        assertThat(c.peerStatesView().get("t").get("b").epoch()).isEqualTo(6);
        // Same epoch, older marks (a withdrawn cold mark arriving after its withdrawal): refused as stale.
        TopicState marked = States.toProto(new PeerState("b", "t", 6, Shape.of(split(ONE, 0)),
                ColdMarks.ofBoundaries(Set.of(0x8000)), CAPS, 1));
        TopicState unmarked = States.toProto(new PeerState("b", "t", 6, Shape.of(split(ONE, 0)), ColdMarks.NONE,
                CAPS, 2));
        c.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(unmarked).build()).block();
        ExchangeResponse late = c.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(marked).build())
                .block();
        assertThat(resultOf(late, "t").getCode()).isEqualTo(TopicResult.Code.STALE);
        assertThat(c.peerStatesView().get("t").get("b").coldMarks()).isEmpty();
    }

    @Test
    void marksThatNameNoBoundaryOrNoPowerOfTwoAreRefusedNotKept() {
        StepVerifier.create(a.markCold("t", 70000)).expectErrorMessage(
                "boundary 70000 is not a boundary of the ring (1..65535)").verify();
        StepVerifier.create(a.markBucketsCold("t", HashRange.FULL, 3)).expectErrorMessage(
                "bucket count 3 is not a power of two within 1..32768").verify();
        assertThat(a.coldMarks("t")).isEmpty();
    }

    @Test
    void aLowerCountIsNotAnOwnChangeOfAReplicatedTopic() {
        store.compareAndSet("t", 0, ONE.apply(Mutation.rebucket(0, 8), 0, 0).layoutOrThrow()).block();
        long id = store.get("t").block().activeSegments().get(0).id();
        assertThat(a.rebucket("t", id, 2).block()).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.LOWERS_BUCKETS));
    }

    @Test
    void anOperatorsLowerCountIsAColdMarkOnTheStoredSegmentsRangeDecidedByTheController() {
        store.compareAndSet("t", 0, ONE.apply(Mutation.rebucket(0, 8), 0, 0).layoutOrThrow()).block();
        Layout stored = store.get("t").block();
        Segment s = stored.activeSegments().get(0);
        assertThat(a.rebucketOrMarkCold("t", s.id(), 2).block()).isEqualTo(new Rebucket.MarkedCold(s.range(), 2));
        assertThat(a.exchangedMarksDescribed("t").bucketLowerings()).containsEntry(s.range().toHexString(), 2);
        assertThat(store.get("t").block()).as("lowered only once every peer issued it").isEqualTo(stored);

        // a higher count is the cluster's own change, applied now; the policy's rebucket never marks
        assertThat(a.rebucketOrMarkCold("t", s.id(), 16).block()).isInstanceOfSatisfying(Rebucket.Now.class,
                now -> assertThat(now.outcome()).isInstanceOf(Outcome.Applied.class));
        long raised = store.get("t").block().activeSegments().get(0).id();
        a.unmarkBucketsCold("t", s.range());
        assertThat(a.rebucket("t", raised, 4).block()).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.LOWERS_BUCKETS));
        assertThat(a.exchangedMarksDescribed("t").bucketLowerings()).isEmpty();
        // a refusal now is answered as such
        assertThat(a.rebucketOrMarkCold("t", s.id(), 32).block()).isInstanceOfSatisfying(Rebucket.Now.class,
                now -> assertThat(now.outcome()).isInstanceOfSatisfying(Outcome.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.SEGMENT_SEALED)));
    }

    /** A store whose writes to one topic fail. */
    private static final class FailingStore implements LayoutStore {
        private final LayoutStore inner;
        private final String broken;

        FailingStore(LayoutStore inner, String broken) {
            this.inner = inner;
            this.broken = broken;
        }

        @Override
        public Mono<Layout> get(String topic) {
            return inner.get(topic);
        }

        @Override
        public Mono<Layout> create(String topic, Layout initial) {
            return inner.create(topic, initial);
        }

        @Override
        public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
            return topic.equals(broken) ? Mono.error(new IllegalStateException("store is down"))
                    : inner.compareAndSet(topic, expectedEpoch, next);
        }

        @Override
        public Flux<Layout> watch(String topic) {
            return inner.watch(topic);
        }

        @Override
        public Flux<String> topics() {
            return inner.topics();
        }
    }
}
