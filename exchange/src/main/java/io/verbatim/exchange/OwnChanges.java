package io.verbatim.exchange;

import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.layoutstore.StaleEpochException;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.ReplicatedMerge;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.retry.Retry;

/**
 * The changes this cluster makes of its own, from the local policy, an operator or garbage collection:
 * splits and rebucket-ups (refused while deferring after a failover, when they would lower buckets or
 * pass an effective cap once folded with the peers' layouts; re-planned when another change wins the
 * compare-and-set), an operator's rebucket (a lower count a cold mark, decided here on the stored layout),
 * prunes of sealed segments, and the cold marks it sets and withdraws (an operator's boundaries and
 * lowerings, the policy's boundaries), each followed by a fold. Every real change is recorded with its
 * reason and told to {@code changed} (so the peers hear of it at once) as soon as it is committed, and
 * answered once this node serves it ({@link Adoption}).
 */
final class OwnChanges {
    /** How often an own change re-reads and re-plans when other changes keep winning the compare-and-set. */
    private static final int OWN_CHANGE_ATTEMPTS = 64;

    private final String cluster;
    private final LayoutStore store;
    private final Adoption adoption;
    private final Scheduler clock;
    private final Caps caps;
    private final PeerBook book;
    private final ClusterMarks marks;
    private final RecentChanges recentChanges;
    /** Folds a topic with the held peer states (an agreement a mark completes goes ahead). */
    private final Function<String, Mono<Void>> fold;
    private final Consumer<String> changed;

    OwnChanges(String cluster, LayoutStore store, Adoption adoption, Scheduler clock, Caps caps, PeerBook book,
            ClusterMarks marks, RecentChanges recentChanges, Function<String, Mono<Void>> fold, Consumer<String> changed) {
        this.cluster = cluster;
        this.store = store;
        this.adoption = adoption;
        this.clock = clock;
        this.caps = caps;
        this.book = book;
        this.marks = marks;
        this.recentChanges = recentChanges;
        this.fold = fold;
        this.changed = changed;
    }

    // ---- layout changes ---------------------------------------------------------------------------

    /** Applies {@code m}, a split or a rebucket, unless it must wait, lowers buckets or passes a cap. */
    Mono<Outcome> apply(String topic, Mutation m) {
        return change(topic, m, false).map(r -> ((Rebucket.Now) r).outcome());
    }

    /**
     * An operator's rebucket: as {@link #apply}, but a lower count of an active segment, decided on the stored layout,
     * is a cold mark on the segment's range (then a fold) rather than a refusal.
     */
    Mono<Rebucket> rebucketOrMarkCold(String topic, long segmentId, int bucketCount) {
        return change(topic, Mutation.rebucket(segmentId, bucketCount), true).flatMap(r -> r
                instanceof Rebucket.MarkedCold cold ? markBucketsCold(topic, cold.range(), cold.bucketCount()).thenReturn(r)
                : Mono.just(r));
    }

    /**
     * Applies {@code m} (re-planned when another change wins the compare-and-set) unless it must wait, lowers buckets
     * or passes a cap; a lowering is {@link Rebucket.MarkedCold} (not marked yet) when {@code lowerAsMark}, else
     * refused.
     */
    private Mono<Rebucket> change(String topic, Mutation m, boolean lowerAsMark) {
        return Mono.defer(() -> {
            if (book.awaitingEveryPeer()) {
                return Mono.just(now(refused(Outcome.Refusal.DEFERRED,
                        "own changes wait until every peer's state is held after the failover")));
            }
            return store.get(topic).switchIfEmpty(Mono.error(() -> new IllegalArgumentException("cluster " + cluster
                    + " has no topic '" + topic + "'"))).flatMap(layout -> {
                        Segment lowered = lowered(layout, m);
                        if (lowered != null) {
                            return Mono.just(lowerAsMark
                                    ? new Rebucket.MarkedCold(lowered.range(), ((Mutation.Rebucket) m).bucketCount())
                                    : now(refused(Outcome.Refusal.LOWERS_BUCKETS, "lowering a bucket count of a "
                                            + "replicated topic is a cold mark (markBucketsCold): done once every "
                                            + "cluster issued it")));
                        }
                        Outcome o = layout.apply(m, layout.epoch(), clock.now(TimeUnit.MILLISECONDS));
                        if (o instanceof Outcome.Applied a) {
                            String over = pastCaps(topic, layout, a.layout(), m);
                            if (over != null) {
                                return Mono.just(now(refused(Outcome.Refusal.EXCEEDS_CAPS, over)));
                            }
                            // recorded and pushed once committed; only the answer waits for this node to serve it
                            return store.compareAndSet(topic, layout.epoch(), a.layout()).doOnNext(l -> {
                                recentChanges.record(topic, layout.epoch(), List.of(m), List.of("own"), layout,
                                        clock.now(TimeUnit.MILLISECONDS));
                                changed.accept(topic);
                            }).flatMap(l -> adoption.readBack(topic, l)).thenReturn(now(o));
                        }
                        return Mono.just(now(o));
                    });
        }).retryWhen(Retry.max(OWN_CHANGE_ATTEMPTS).filter(StaleEpochException.class::isInstance))
                .onErrorResume(e -> e.getCause() instanceof StaleEpochException || e instanceof StaleEpochException,
                        e -> Mono.just(now(refused(Outcome.Refusal.STALE_EPOCH, "the layout of " + topic
                                + " kept changing (" + OWN_CHANGE_ATTEMPTS + " attempts); try again"))));
    }

    private static Rebucket now(Outcome o) {
        return new Rebucket.Now(o);
    }

    /** The active segment of {@code layout} whose bucket count {@code m} lowers, or null when it lowers none. */
    private static @Nullable Segment lowered(Layout layout, Mutation m) {
        return m instanceof Mutation.Rebucket r ? layout.segment(r.segmentId()).filter(Segment::isActive)
                .filter(s -> r.bucketCount() < s.buckets().count()).orElse(null) : null;
    }

    /** Why {@code next} would pass an effective cap once folded with the peers' layouts; null if it would not. */
    private @Nullable String pastCaps(String topic, Layout before, Layout next, Mutation m) {
        Caps effective = book.effectiveCaps(topic, caps);
        if (m instanceof Mutation.Rebucket r) {
            int cap = Buckets.floorCount(effective.maxEntryBucketsPerSegment());
            int was = before.segment(r.segmentId()).map(s -> s.buckets().count()).orElse(0);
            return r.bucketCount() > cap && r.bucketCount() > was ? "bucket count " + r.bucketCount()
                    + " would exceed the effective cap of " + cap + " per segment (" + effective + ")" : null;
        }
        List<Shape> shapes = new ArrayList<>();
        shapes.add(Shape.of(next));
        shapes.addAll(book.shapesOf(topic));
        int segments = Join.of(shapes).cells().size();
        return segments > effective.maxSegments() && segments > before.activeSegments().size()
                ? "the layout folded with the peers' would have " + segments + " segments, above the effective cap of "
                        + effective.maxSegments() + " (" + effective + ")"
                : null;
    }

    /** Deletes those of {@code segmentIds} still sealed when the change lands; the layout after. */
    Mono<Layout> prune(String topic, Collection<Long> segmentIds) {
        return store.get(topic).flatMap(before -> store.update(topic, layout -> segmentIds.stream()
                .filter(id -> layout.segment(id).map(s -> s.isSealed()).orElse(false)).map(Mutation::prune).toList(),
                clock.now(TimeUnit.MILLISECONDS))
                .doOnNext(after -> {
                    if (after.epoch() != before.epoch()) {
                        changed.accept(topic);
                    }
                })
                .flatMap(after -> after.epoch() == before.epoch() ? Mono.just(after) : adoption.readBack(topic, after)));
    }

    private static Outcome refused(Outcome.Refusal reason, String message) {
        return new Outcome.Refused(reason, message);
    }

    // ---- cold marks -------------------------------------------------------------------------------

    /** An operator's cold mark on {@code boundary}, then a fold. */
    Mono<Void> markCold(String topic, int boundary) {
        return Mono.defer(() -> markThenFold(topic, m -> m.markManual(boundary(boundary))));
    }

    /** A boundary a mark can name: the first hash of an upper side, 1..65535. */
    private static int boundary(int boundary) {
        if (!ReplicatedMerge.isMarkable(boundary)) {
            throw new IllegalArgumentException("boundary " + boundary + " is not a boundary of the ring (1..65535)");
        }
        return boundary;
    }

    boolean unmarkCold(String topic, int boundary) {
        return withdraw(topic, m -> m.withdrawManual(boundary));
    }

    /** An operator's lowering of {@code range} to {@code bucketCount}, then a fold. */
    Mono<Void> markBucketsCold(String topic, HashRange range, int bucketCount) {
        return Mono.defer(() -> {
            if (!Buckets.isValidCount(bucketCount)) {
                return Mono.error(new IllegalArgumentException("bucket count " + bucketCount
                        + " is not a power of two within 1.." + Buckets.MAX_COUNT));
            }
            return markThenFold(topic, m -> m.markBuckets(range, bucketCount));
        });
    }

    boolean unmarkBucketsCold(String topic, HashRange range) {
        return withdraw(topic, m -> m.withdrawBuckets(range));
    }

    /** The policy's cold boundaries in place of its previous ones, then a fold. */
    Mono<Void> policyColdMarks(String topic, Set<Integer> boundaries) {
        if (boundaries.isEmpty() && !marks.has(topic)) {
            return fold.apply(topic); // nothing marked, nothing to remember: no marks made for the topic
        }
        return Mono.defer(() -> {
            boundaries.forEach(OwnChanges::boundary);
            return markThenFold(topic, m -> m.policy(boundaries));
        });
    }

    /** Changes the topic's marks; a real change is pushed at once; then folds (an agreement may be complete). */
    private Mono<Void> markThenFold(String topic, Predicate<TopicMarks> change) {
        return Mono.defer(() -> {
            if (change.test(marks.of(topic))) {
                changed.accept(topic);
            }
            return fold.apply(topic);
        });
    }

    private boolean withdraw(String topic, Predicate<TopicMarks> change) {
        TopicMarks m = marks.get(topic);
        boolean had = m != null && change.test(m);
        if (had) {
            changed.accept(topic);
        }
        return had;
    }
}
