package io.verbatim.exchange;

import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Folds the peers' states of each topic into its local layout, on its own, and commits the result
 * through the {@link LayoutStore}: the plan ({@link Fold#plan}) made again on every compare-and-set
 * lost, a peer's state kept once its fold committed, the changes recorded with their reasons (the call's
 * answer then waits for this node to serve what it folded: {@link Adoption}, in {@code Calls}).
 * Owns what each topic's latest fold found: its cap mismatches, whether the caps limited it, its
 * convergence with the peers, and its inputs when it planned nothing (a fold on the same inputs is
 * skipped).
 */
final class TopicFolds {
    private final LayoutStore store;
    private final Scheduler clock;
    private final Caps caps;
    private final PeerBook book;
    private final ClusterMarks marks;
    private final RecentChanges recentChanges;
    private final ExchangeMetrics metrics;
    /** Told of every topic whose state changed here (layout or marks): each is a reason to push at once. */
    private final Consumer<String> changed;
    private final Convergence convergence = new Convergence();
    // Per topic, only what differs from the usual (no mismatch, not limited): a large fleet's topics are
    // mostly usual, and each entry held for every topic costs memory.
    private final Map<String, List<CapMismatch>> capMismatches = new ConcurrentHashMap<>();
    private final Set<String> capLimited = ConcurrentHashMap.newKeySet();
    /** topic → the inputs of its latest fold, when it planned nothing: a fold on the same inputs is skipped. */
    private final Map<String, Settled> settled = new ConcurrentHashMap<>();

    /** A fold's plan, the layout it was made for, and everything else it read. */
    private record Planned(Layout base, FoldPlan plan, Settled inputs) {
    }

    TopicFolds(LayoutStore store, Scheduler clock, Caps caps, PeerBook book, ClusterMarks marks,
            RecentChanges recentChanges, ExchangeMetrics metrics, Consumer<String> changed) {
        this.store = store;
        this.clock = clock;
        this.caps = caps;
        this.book = book;
        this.marks = marks;
        this.recentChanges = recentChanges;
        this.metrics = metrics;
        this.changed = changed;
    }

    /**
     * Folds the held peer states of {@code topic}, with {@code candidate} in place of its cluster's held
     * state when not null, and keeps the candidate once the fold committed.
     *
     * @return the layout after, or empty when the topic is not held here (nothing kept)
     */
    Mono<Layout> fold(String topic, @Nullable PeerState candidate) {
        return store.get(topic).flatMap(before -> {
            if (settledAt(topic, before, candidate)) {
                return Mono.just(before);
            }
            // This fold's own latest plan (the store may call the plan again on a lost compare-and-set): folds
            // of one topic run concurrently (a peer's push, an anti-entropy reply), so never a shared slot.
            AtomicReference<@Nullable Planned> latest = new AtomicReference<>();
            return store.update(topic, layout -> {
                Planned p = planFor(topic, layout, candidate);
                latest.set(p);
                return p.plan().mutations();
            }, clock.now(TimeUnit.MILLISECONDS))
                    // kept, recorded and pushed as soon as it is committed: the caller waits for this node to
                    // serve it (Adoption), and a caller that gives up must not take the bookkeeping with it
                    .doOnNext(after -> {
                        if (candidate != null) {
                            book.keep(candidate);
                        }
                        Planned planned = latest.get();
                        if (planned != null && after.epoch() != planned.base().epoch()) {
                            recentChanges.record(topic, planned.base().epoch(), planned.plan().mutations(),
                                    planned.plan().reasons(), planned.base(), clock.now(TimeUnit.MILLISECONDS));
                        }
                        if (planned != null && after == planned.base() && planned.plan().mutations().isEmpty()) {
                            settled.put(topic, planned.inputs());
                        } else {
                            settled.remove(topic);
                        }
                        afterFold(topic, after, after.epoch() != before.epoch());
                    });
        });
    }

    /**
     * True when folding {@code layout} would read what the topic's latest fold read, which planned
     * nothing: it would plan nothing again, and leave status and marks as they are. The candidate is
     * kept then (it equals the state the fold read).
     */
    private boolean settledAt(String topic, Layout layout, @Nullable PeerState candidate) {
        Settled last = settled.get(topic);
        if (last == null) {
            return false;
        }
        Map<String, PeerState> held = book.heldOf(topic);
        boolean mayCoarsen = !book.awaitingEveryPeer() && book.everyPeerHeld(held, candidate);
        if (!last.matches(layout, marks.own(topic), caps, held, candidate, mayCoarsen)) {
            return false;
        }
        if (candidate != null && !candidate.equals(held.get(candidate.cluster()))) {
            book.keep(candidate);
        }
        return true;
    }

    private Planned planFor(String topic, Layout layout, @Nullable PeerState candidate) {
        Collection<PeerState> states = book.statesOf(topic, candidate);
        ColdMarks own = marks.own(topic);
        Caps local = caps;
        boolean mayCoarsen = !book.awaitingEveryPeer() && book.everyPeerHeld(states);
        FoldPlan plan = Fold.plan(layout, own, local, states, mayCoarsen);
        List<CapMismatch> mismatches = Fold.mismatches(local, PeerBook.capsOf(states));
        if (mismatches.isEmpty()) {
            capMismatches.remove(topic);
        } else {
            capMismatches.put(topic, mismatches);
        }
        if (plan.capLimited()) {
            capLimited.add(topic);
        } else {
            capLimited.remove(topic);
        }
        TopicMarks topicMarks = plan.capMarks().isEmpty() ? marks.get(topic) : marks.of(topic);
        if (topicMarks != null && topicMarks.caps(plan.capMarks())) {
            changed.accept(topic); // what the caps make us offer is part of our state
        }
        return new Planned(layout, plan, new Settled(layout, own, local, List.copyOf(states), mayCoarsen));
    }

    private void afterFold(String topic, Layout after, boolean layoutChanged) {
        Collection<PeerState> states = book.statesOf(topic, null);
        Shape local = Shape.of(after);
        convergence.afterFold(topic, local, marks.exchanged(topic), states, clock.now(TimeUnit.NANOSECONDS))
                .ifPresent(metrics.convergenceLagNanos::set);
        TopicMarks topicMarks = marks.get(topic);
        if (topicMarks != null) {
            topicMarks.forgetSettled(local, states, book.everyPeerHeld(states));
        }
        if (layoutChanged) {
            changed.accept(topic); // our layout moved: every peer hears of it at once
        }
    }

    /** True when the topic's last fold left part of the join out to stay within the effective caps. */
    boolean capLimited(String topic) {
        return capLimited.contains(topic);
    }

    /** Each peer cap that differs from this cluster's, as the topic's last fold found them. */
    List<CapMismatch> capMismatches(String topic) {
        return capMismatches.getOrDefault(topic, List.of());
    }

    Convergence convergence() {
        return convergence;
    }
}
