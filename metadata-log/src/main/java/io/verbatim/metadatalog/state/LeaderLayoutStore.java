package io.verbatim.metadatalog.state;

import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.metadatalog.server.CommandLostException;
import io.verbatim.metadatalog.server.NotLeaderException;
import io.verbatim.metadatalog.server.ReadTimeoutException;
import io.verbatim.model.Layout;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The layout store on a metadata log, routed to the member that leads: the one leader-routing store, for a
 * process that holds several members of one group and for a member in a process of its own.
 *
 * <p>Several members ({@link #LeaderLayoutStore(Map, Supplier, String, Duration, Scheduler)}, the embedded
 * runtime): each call goes to the current leader's store and, when leadership moved under it (not the
 * leader, a read with no confirmation, a command lost with its leader — none of which took effect), to the
 * next leader, with backoff, for up to about {@code patience}. An outcome this process cannot know ({@link
 * io.verbatim.metadatalog.server.CommandOutcomeUnknownException}) is the caller's: a compare-and-set retried
 * blindly could report its own success as a conflict. A watch follows {@code watcher}'s own replica.
 *
 * <p>One member ({@link #ofMember}, a controller replica in its own process): linearizable reads while it
 * leads (what a controller decides on) and its own replica's state otherwise (what a status shows, with no
 * leader to ask during an election); writes go to its log, which refuses them, naming the leader it knows,
 * when it does not lead; nothing is retried. Writes are compare-and-set commands either way: a decision
 * made on a stale read is refused at commit, never applied.
 */
public final class LeaderLayoutStore implements LayoutStore {
    private final Map<String, RaftLayoutStore> members;
    private final Supplier<Optional<String>> leader;
    private final String watcher;
    /** Whether a read asks the leader (else it reads the member's own replica). */
    private final BooleanSupplier linearizable;
    /** How long a call follows leadership as it moves; zero: not at all. */
    private final Duration patience;
    private final Scheduler timer;

    public LeaderLayoutStore(Map<String, RaftLayoutStore> members, Supplier<Optional<String>> leader, String watcher,
            Duration patience, Scheduler timer) {
        this(members, leader, watcher, () -> true, patience, timer);
    }

    private LeaderLayoutStore(Map<String, RaftLayoutStore> members, Supplier<Optional<String>> leader, String watcher,
            BooleanSupplier linearizable, Duration patience, Scheduler timer) {
        if (!members.containsKey(watcher)) {
            throw new IllegalArgumentException("watcher " + watcher + " is not one of the members " + members.keySet());
        }
        this.members = Map.copyOf(members);
        this.leader = leader;
        this.watcher = watcher;
        this.linearizable = linearizable;
        this.patience = patience;
        this.timer = timer;
    }

    /**
     * The store of member {@code id} alone, its store {@code store}: linearizable reads while {@code leads}
     * says it leads, its own replica's state otherwise; writes to its log, never retried.
     */
    public static LeaderLayoutStore ofMember(String id, RaftLayoutStore store, BooleanSupplier leads) {
        return new LeaderLayoutStore(Map.of(id, store), () -> Optional.of(id), id, leads, Duration.ZERO,
                Schedulers.immediate());
    }

    private <T> Mono<T> onLeader(Function<RaftLayoutStore, Mono<T>> call) {
        Mono<T> once = Mono.defer(() -> {
            Optional<String> current = leader.get();
            RaftLayoutStore store = current.map(members::get).orElse(null);
            return store == null ? Mono.<T>error(new NotLeaderException("this process", current)) : call.apply(store);
        });
        if (patience.isZero()) {
            return once;
        }
        // backoff from 10 ms to 200 ms: about one attempt per 200 ms of patience, plus the short first ones
        long attempts = Math.max(1, patience.toMillis() / 200 + 5);
        return once.retryWhen(Retry.backoff(attempts, Duration.ofMillis(10)).maxBackoff(Duration.ofMillis(200))
                .filter(LeaderLayoutStore::leadershipMoved).scheduler(timer)
                .onRetryExhaustedThrow((spec, signal) -> signal.failure()));
    }

    private static boolean leadershipMoved(Throwable e) {
        return e instanceof NotLeaderException || e instanceof ReadTimeoutException || e instanceof CommandLostException;
    }

    @Override
    public Mono<Layout> get(String topic) {
        return onLeader(s -> linearizable.getAsBoolean() ? s.get(topic) : s.getLocal(topic));
    }

    @Override
    public Mono<Layout> create(String topic, Layout initial) {
        return onLeader(s -> s.create(topic, initial));
    }

    @Override
    public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
        return onLeader(s -> s.compareAndSet(topic, expectedEpoch, next));
    }

    @Override
    public Flux<Layout> watch(String topic) {
        return Objects.requireNonNull(members.get(watcher), "the watcher's store, checked at construction")
                .watch(topic);
    }

    @Override
    public Flux<String> topics() {
        return onLeader(s -> (linearizable.getAsBoolean() ? s.topics() : s.topicsLocal()).collectList())
                .flatMapMany(Flux::fromIterable);
    }
}
