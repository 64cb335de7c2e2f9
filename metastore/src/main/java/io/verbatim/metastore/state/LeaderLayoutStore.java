package io.verbatim.metastore.state;

import io.verbatim.metastore.server.CommandLostException;
import io.verbatim.metastore.server.NotLeaderException;
import io.verbatim.metastore.server.ReadTimeoutException;
import io.verbatim.model.Layout;
import io.verbatim.store.LayoutStore;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.retry.Retry;

/**
 * The layout store of whichever member of a group leads, for a process that holds several members of one
 * group (the embedded runtime): each call goes to the current leader's store and, when leadership moved
 * under it (not the leader, a read with no confirmation, a command lost with its leader — none of which
 * took effect), to the next leader, with backoff, for up to about {@code patience}. An outcome this process
 * cannot know ({@link io.verbatim.metastore.server.CommandOutcomeUnknownException}) is the caller's: a
 * compare-and-set retried blindly could report its own success as a conflict. A watch follows {@code
 * watcher}'s own replica.
 */
public final class LeaderLayoutStore implements LayoutStore {
    private final Map<String, RaftLayoutStore> members;
    private final Supplier<Optional<String>> leader;
    private final String watcher;
    private final Duration patience;
    private final Scheduler timer;

    public LeaderLayoutStore(Map<String, RaftLayoutStore> members, Supplier<Optional<String>> leader, String watcher,
            Duration patience, Scheduler timer) {
        if (!members.containsKey(watcher)) {
            throw new IllegalArgumentException("watcher " + watcher + " is not one of the members " + members.keySet());
        }
        this.members = Map.copyOf(members);
        this.leader = leader;
        this.watcher = watcher;
        this.patience = patience;
        this.timer = timer;
    }

    private <T> Mono<T> onLeader(java.util.function.Function<RaftLayoutStore, Mono<T>> call) {
        // backoff from 10 ms to 200 ms: about one attempt per 200 ms of patience, plus the short first ones
        long attempts = Math.max(1, patience.toMillis() / 200 + 5);
        return Mono.defer(() -> {
            Optional<String> current = leader.get();
            RaftLayoutStore store = current.map(members::get).orElse(null);
            return store == null ? Mono.<T>error(new NotLeaderException("this process", current)) : call.apply(store);
        }).retryWhen(Retry.backoff(attempts, Duration.ofMillis(10)).maxBackoff(Duration.ofMillis(200))
                .filter(LeaderLayoutStore::leadershipMoved).scheduler(timer)
                .onRetryExhaustedThrow((spec, signal) -> signal.failure()));
    }

    private static boolean leadershipMoved(Throwable e) {
        return e instanceof NotLeaderException || e instanceof ReadTimeoutException || e instanceof CommandLostException;
    }

    @Override
    public Mono<Layout> get(String topic) {
        return onLeader(s -> s.get(topic));
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
        return onLeader(s -> s.topics().collectList()).flatMapMany(Flux::fromIterable);
    }
}
