package io.verbatim.exchange;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.exchange.proto.TopicState;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A seeded network between controllers on a virtual clock: random delays (so calls overtake each
 * other), lost requests and answers, duplicated deliveries, partitions, and nodes that are down.
 */
final class SimNetwork {
    final Map<String, Controller> nodes = new ConcurrentHashMap<>();
    /** "receiver|sender|topic" → every state the receiver got from the sender, as (boundaries, cold marks). */
    final Map<String, List<TopicView>> delivered = new ConcurrentHashMap<>();

    /** What one delivered state said of one topic. */
    record TopicView(Set<Integer> boundaries, Set<Integer> coldMarks) {
    }
    private final Set<String> partitioned = new HashSet<>();
    private final Set<String> down = new HashSet<>();
    private final Random random;
    private final Scheduler clock;
    double lossRate;
    double duplicateRate;
    int maxDelayMillis;

    SimNetwork(Random random, Scheduler clock) {
        this.random = random;
        this.clock = clock;
    }

    ExchangeTransport transportOf(String from) {
        return (peer, request) -> deliver(from, peer, request);
    }

    private Mono<ExchangeResponse> deliver(String from, String to, ExchangeRequest request) {
        Duration there = Duration.ofMillis(random.nextInt(maxDelayMillis + 1));
        Duration back = Duration.ofMillis(random.nextInt(maxDelayMillis + 1));
        boolean lostThere = random.nextDouble() < lossRate;
        boolean lostBack = random.nextDouble() < lossRate;
        boolean duplicate = random.nextDouble() < duplicateRate;
        return Mono.delay(there, clock).flatMap(t -> {
            if (lostThere || cut(from, to)) {
                return Mono.error(new ExchangeException(503, to + " unreachable"));
            }
            Controller target = nodes.get(to);
            Mono<ExchangeResponse> call = target.receive(request).doOnSuccess(ok -> log(to, from,
                    request.getTopicsList()));
            if (duplicate) {
                call = call.flatMap(r -> target.receive(request).onErrorResume(e -> Mono.empty()).thenReturn(r));
            }
            return call.delayElement(back, clock).flatMap(r -> {
                if (lostBack || cut(from, to)) {
                    return Mono.error(new ExchangeException(503, "answer from " + to + " lost"));
                }
                log(from, to, r.getTopicsList());
                return Mono.just(r);
            });
        });
    }

    private void log(String receiver, String sender, List<TopicState> topics) {
        for (var t : topics) {
            Set<Integer> boundaries = new HashSet<>();
            for (int i = 1; i < t.getCellsCount(); i++) {
                boundaries.add(t.getCells(i).getStart());
            }
            delivered.computeIfAbsent(receiver + "|" + sender + "|" + t.getTopic(),
                    k -> new CopyOnWriteArrayList<>())
                    .add(new TopicView(boundaries, new HashSet<>(t.getColdMarksList())));
        }
    }

    synchronized boolean cut(String a, String b) {
        return down.contains(a) || down.contains(b) || partitioned.contains(a + "|" + b)
                || partitioned.contains(b + "|" + a);
    }

    synchronized void partition(String a, String b) {
        partitioned.add(a + "|" + b);
    }

    synchronized void heal() {
        partitioned.clear();
        down.clear();
    }

    synchronized void down(String node) {
        down.add(node);
    }

    synchronized void up(String node) {
        down.remove(node);
    }
}
