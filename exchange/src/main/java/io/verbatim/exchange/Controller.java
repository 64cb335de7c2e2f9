package io.verbatim.exchange;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * One cluster's side of the layout exchange (PIP-495) for every topic it holds: the peers' latest
 * states (in memory only), the cold marks and caps, the fold of peer states into the local layout
 * committed through the {@link LayoutStore}, and the per-peer acknowledged epochs. A commit that changed a
 * layout is answered once this node's own storage serves it ({@link Adoption}).
 *
 * <p>A facade over the parts that hold each concern: {@code PeerBook} (what each peer holds and
 * acknowledged, the verdicts), {@code Calls} (both ends of a call, topic by topic), {@code TopicFolds}
 * (the fold of each topic, committed, and what it found), {@code OwnChanges} (this cluster's own splits,
 * rebuckets, prunes and cold marks), {@code ClusterMarks} and {@code RecentChanges}. It owns the stream
 * of topics whose local state changed, which the parts feed.
 *
 * <p>The HTTP endpoint and the simulator both drive this class: {@link #receive} for an arriving call,
 * {@link #statesFor} and {@link #onAnswer} for the sending side. Each topic of a call stands on its
 * own: one topic's stale, unusable or failing state never refuses the others.
 */
public final class Controller {
    private final String cluster;
    private final LayoutStore store;
    private final Adoption adoption;
    private final Scheduler clock;
    private final Caps caps;
    private final ExchangeMetrics metrics;
    private final PeerBook book;
    private final ClusterMarks marks;
    private final RecentChanges recentChanges = new RecentChanges();
    private final TopicFolds folds;
    private final OwnChanges own;
    private final Calls calls;
    private final Sinks.Many<String> localChanges = Sinks.many().multicast().directBestEffort();

    /** A controller with no storage in its process to wait for ({@link Adoption#NONE}): the simulator's, a replica's. */
    public Controller(String cluster, Set<String> peers, Caps caps, LayoutStore store, Scheduler clock) {
        this(cluster, peers, caps, store, Adoption.NONE, clock);
    }

    /**
     * @param adoption where a commit that changed a layout waits until this node's own storage serves it (the
     *        storage takes it from the layout store's watch), so what the commit answers is read back here
     */
    public Controller(String cluster, Set<String> peers, Caps caps, LayoutStore store, Adoption adoption,
            Scheduler clock) {
        this.cluster = cluster;
        this.caps = caps;
        this.store = store;
        this.adoption = adoption;
        this.clock = clock;
        this.metrics = new ExchangeMetrics();
        this.book = new PeerBook(peers, metrics);
        this.marks = new ClusterMarks(clock.now(TimeUnit.MILLISECONDS) << 20);
        this.folds = new TopicFolds(store, clock, caps, book, marks, recentChanges, metrics, this::changed);
        this.own = new OwnChanges(cluster, store, adoption, clock, caps, book, marks, recentChanges, this::fold,
                this::changed);
        this.calls = new Calls(cluster, store, adoption, clock, caps, book, marks, folds, metrics);
    }

    public String cluster() {
        return cluster;
    }

    /** The peers in name order (pushes start in that order: a seeded simulation repeats itself). */
    public Set<String> peers() {
        return book.peers();
    }

    public LayoutStore store() {
        return store;
    }

    ExchangeMetrics metrics() {
        return metrics;
    }

    public Caps caps() {
        return caps;
    }

    /** The largest call this cluster's endpoint reads: told to peers in every answer, so they cut to fit. */
    public Controller maxBodyBytes(int value) {
        calls.maxBodyBytes(value);
        return this;
    }

    int maxBodyBytes() {
        return calls.maxBodyBytes();
    }

    /**
     * This controller just became the leader (or restarted): nothing about peers survives, and until it
     * holds every peer's state its own splits, merges and rebuckets wait (PIP-495, failover).
     */
    public void becomeLeader() {
        book.forgetForLeadership();
    }

    /**
     * Takes over as one of a cluster's controller replicas that may have led before, or may have started
     * after the replica that led last: {@link #becomeLeader()}, and its own cold marks (manual and policy)
     * dropped — what another replica withdrew must not come back from an earlier term — and its marks
     * versions raised to the takeover time, above every version an earlier leader offered (one started
     * later than this replica, or after a restart of this one, offered versions from its own start, which
     * the takeover follows; clocks of the replicas' hosts are assumed within an election timeout).
     */
    public void becomeLeaderAfresh() {
        marks.takeOver(clock.now(TimeUnit.MILLISECONDS) << 20);
        becomeLeader();
    }

    /** True while the cluster's own layout changes wait for every peer's state. */
    public boolean deferringOwnChanges() {
        return book.awaitingEveryPeer();
    }

    /** Topics whose local state changed (layout or cold marks): each is a reason to push at once. */
    Flux<String> localChanges() {
        return localChanges.asFlux();
    }

    private void changed(String topic) {
        localChanges.tryEmitNext(topic);
    }

    // ---- receiving ----------------------------------------------------------------------------

    /**
     * Handles a peer's call: every topic state is checked on its own, kept only if it is not older than
     * the one held (unless it supersedes it) and its fold committed; the answer carries a result per
     * topic and this cluster's states, after the folds.
     *
     * @throws ExchangeException (as the {@code Mono}'s error) when the call as a whole is refused: a
     *         cluster outside the replication set (403), a topic twice (400), or no usable state at all
     *         (400, naming the first problem); nothing changed then
     */
    public Mono<ExchangeResponse> receive(ExchangeRequest request) {
        return calls.receive(request);
    }

    // ---- sending ------------------------------------------------------------------------------

    /** The topics this cluster holds, in order: what one full push to a peer carries. */
    public Flux<String> topics() {
        return store.topics();
    }

    /** This cluster's state of every topic it holds, in one call to {@code peer}. */
    public Mono<ExchangeRequest> stateFor(String peer) {
        return topics().collectList().flatMap(topics -> statesFor(peer, topics));
    }

    /** This cluster's states of {@code topics} for a call to {@code peer} (superseding what it must). */
    Mono<ExchangeRequest> statesFor(String peer, List<String> topics) {
        return calls.statesFor(peer, topics);
    }

    /**
     * A peer answered a call: record what it acknowledged, fold in the states it sent back (each kept
     * once its fold committed), and note what it did not take. Topics the peer found stale or failed to
     * fold are left for {@link #retryTopics} (the call itself is not made again: one topic must not hold
     * up the others); a state the peer found unusable is reported, not retried.
     */
    public Mono<Void> onAnswer(String peer, ExchangeRequest sent, ExchangeResponse answer) {
        return calls.onAnswer(peer, sent, answer);
    }

    /** Topics {@code peer} did not take in its latest answers (stale or failed there): worth sending again. */
    Set<String> retryTopics(String peer) {
        return book.retryTopics(peer);
    }

    /** A call to {@code peer} failed: counted; a peer without the endpoint is reported unsupported. */
    public void failed(String peer, Throwable error) {
        calls.failed(peer, error);
    }

    /** Whether {@code peer} has answered since this controller started: the replicators' gate (R-C11). */
    public boolean hasAnswered(String peer) {
        return book.hasAnswered(peer);
    }

    /**
     * The R-C11 verdict on {@code peer}, the latest first and then every change: {@code true} once it took
     * part in the exchange, {@code false} while it answers that it has no exchange endpoint (it is probed
     * again on every anti-entropy round, and a later answer turns the verdict to {@code true}).
     */
    public Flux<Boolean> verdicts(String peer) {
        return book.verdicts(peer);
    }

    /** The first verdict on {@code peer}. */
    Mono<Boolean> awaitAnswer(String peer) {
        return verdicts(peer).next();
    }

    /** Whether {@code peer}'s latest verdict is that it has no exchange endpoint: never to be written to. */
    public boolean isUnsupported(String peer) {
        return book.isUnsupported(peer);
    }

    // ---- folding -------------------------------------------------------------------------------

    /** Folds the held peer states of {@code topic} into the local layout and commits the result. */
    public Mono<Void> fold(String topic) {
        return folds.fold(topic, null).flatMap(after -> adoption.adopted(topic, after.epoch()));
    }

    /** True when the topic's last fold left part of the join out to stay within the effective caps. */
    boolean capLimited(String topic) {
        return folds.capLimited(topic);
    }

    /** The topic's latest layout changes on this cluster, oldest first: what, why and when. */
    public List<LayoutChange> recentChanges(String topic) {
        return recentChanges.of(topic);
    }

    /** The caps effective for {@code topic}: the minimum over this cluster and its peers' latest states. */
    public Caps effectiveCaps(String topic) {
        return book.effectiveCaps(topic, caps);
    }

    // ---- own changes: the local policy and the operator -------------------------------------------

    /**
     * The local policy (or an operator) splits a segment at its midpoint. Refused while deferring after a
     * failover, and when the layout folded with the peers' would pass an effective cap. A change that
     * meets another on the stored epoch is re-planned on the new layout.
     */
    public Mono<Outcome> split(String topic, long segmentId) {
        return own.apply(topic, Mutation.split(segmentId));
    }

    /**
     * Raises a segment's bucket count (within the effective cap). Lowering is not an own change on a
     * replicated topic: it is a cold mark ({@link #markBucketsCold}), done once every cluster agrees.
     */
    public Mono<Outcome> rebucket(String topic, long segmentId, int bucketCount) {
        return own.apply(topic, Mutation.rebucket(segmentId, bucketCount));
    }

    /**
     * An operator's rebucket, decided on the stored layout: a higher count as {@link #rebucket} (applied now, or
     * refused); a lower count of an active segment is a cold mark on its range ({@link #markBucketsCold}), lowered
     * once every cluster issued it or holds no more there.
     */
    public Mono<Rebucket> rebucketOrMarkCold(String topic, long segmentId, int bucketCount) {
        return own.rebucketOrMarkCold(topic, segmentId, bucketCount);
    }

    /**
     * Garbage collection deletes sealed segments from the topic's layout (the brokers then drop their
     * logs). Those no longer sealed or present when the change lands are left out; the shape does not
     * change, so nothing is deferred after a failover.
     *
     * @return the layout after, or the one held when there was nothing to delete
     */
    public Mono<Layout> prune(String topic, Collection<Long> segmentIds) {
        return own.prune(topic, segmentIds);
    }

    /**
     * Marks a boundary cold for an operator (a manual merge is one): it is merged once every peer marks
     * it cold or no longer has it, and the mark stays until withdrawn or settled.
     */
    public Mono<Void> markCold(String topic, int boundary) {
        return own.markCold(topic, boundary);
    }

    /** Withdraws an operator's cold mark on a boundary; true if there was one. */
    public boolean unmarkCold(String topic, int boundary) {
        return own.unmarkCold(topic, boundary);
    }

    /**
     * Marks a segment's range to have its bucket count lowered to {@code bucketCount} (a manual
     * rebucket-down): done once every cluster marks it too or holds no more there.
     */
    public Mono<Void> markBucketsCold(String topic, HashRange range, int bucketCount) {
        return own.markBucketsCold(topic, range, bucketCount);
    }

    /** Withdraws an operator's lowering of {@code range}; true if there was one. */
    public boolean unmarkBucketsCold(String topic, HashRange range) {
        return own.unmarkBucketsCold(topic, range);
    }

    /**
     * The local policy's cold boundaries as of its latest evaluation: replaces its previous ones (a range
     * that turned hot loses its mark), then folds, so agreed merges go ahead.
     */
    public Mono<Void> policyColdMarks(String topic, Set<Integer> boundaries) {
        return own.policyColdMarks(topic, boundaries);
    }

    /** The boundaries the local policy marked cold at its latest evaluation. */
    public Set<Integer> policyColdMarksOf(String topic) {
        return marks.policy(topic);
    }

    /** Every boundary this cluster offers to merge, whatever the source. */
    public Set<Integer> coldMarks(String topic) {
        return marks.exchanged(topic).boundaries();
    }

    /** The marks of {@code topic} by source (manual, policy, caps, bucket lowerings), for an admin answer. */
    public MarksBySource exchangedMarksDescribed(String topic) {
        return marks.describe(topic);
    }

    /** Everything this cluster offers to coarsen for {@code topic}. */
    ColdMarks exchangedMarks(String topic) {
        return marks.exchanged(topic);
    }

    // ---- status -------------------------------------------------------------------------------

    /**
     * Per peer the exchange's verdict; per topic its layout, caps, cold marks, latest changes, lag, and per
     * remote the converged and diverged ranges, epochs, age of the last state and backlog (E11).
     */
    public Mono<ClusterStatus> status(BacklogSource backlog) {
        return StatusAssembler.status(this, backlog);
    }

    /** Diverged ranges over all topics and peers as of the last folds: the gauge of R-F. */
    int divergedRangesNow() {
        return folds.convergence().divergedRangesNow();
    }

    /** Each peer cap that differs from this cluster's, from the peers' latest states of any topic. */
    List<CapMismatch> capMismatchesNow() {
        return Fold.mismatches(caps, peerCaps());
    }

    /** Each peer's caps, as its latest state of any topic carries them. */
    Map<String, Caps> peerCaps() {
        return book.peerCaps();
    }

    // What the status reads (StatusAssembler), each value at once.

    long nowNanos() {
        return clock.now(TimeUnit.NANOSECONDS);
    }

    Convergence convergence() {
        return folds.convergence();
    }

    PeerStatus.Verdict verdict(String peer) {
        return book.verdict(peer);
    }

    OptionalLong lastHeardNanos(String peer) {
        return book.lastHeardNanos(peer);
    }

    Optional<PeerState> heldState(String topic, String peer) {
        return Optional.ofNullable(book.held(topic, peer));
    }

    Collection<PeerState> statesOf(String topic) {
        return book.statesOf(topic, null);
    }

    OptionalLong acknowledgedEpoch(String peer, String topic) {
        return book.acknowledgedEpoch(peer, topic);
    }

    Optional<String> refusedOurState(String peer, String topic) {
        return book.refusedOurState(peer, topic);
    }

    List<CapMismatch> capMismatches(String topic) {
        return folds.capMismatches(topic);
    }

    /** Every peer's held state, topic → peer → state: a copy. */
    Map<String, Map<String, PeerState>> peerStatesView() {
        return book.view();
    }

    /** Replication backlog per segment toward a remote, from the replication side (status only). */
    @FunctionalInterface
    public interface BacklogSource {
        BacklogSource NONE = (topic, remote) -> Map.of();

        Map<String, Long> backlog(String topic, String remote);
    }

}
