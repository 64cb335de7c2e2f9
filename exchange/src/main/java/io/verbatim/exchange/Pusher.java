package io.verbatim.exchange;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * The sending side of the exchange: for every peer, the whole state of every topic in one call (E9),
 * at once on every local change, retried with exponential backoff and jitter until acknowledged, and
 * again on every anti-entropy tick. Changes that arrive while a push is out collapse into one more push.
 *
 * <p>The backoff is {@link io.verbatim.model.Backoff}, waited with a {@code Mono.delay} on the injected
 * scheduler, its jitter drawn from a generator a simulation can seed.
 */
public final class Pusher implements Disposable {
    private static final Logger LOG = Loggers.getLogger(Pusher.class);

    private final Controller controller;
    private final ExchangeTransport transport;
    private final ExchangeConfig config;
    private final Scheduler clock;
    private final RandomGenerator random;
    private final List<Disposable> loops = new ArrayList<>();

    public Pusher(Controller controller, ExchangeTransport transport, ExchangeConfig config, Scheduler clock) {
        this(controller, transport, config, clock, new SplittableRandom());
    }

    /** @param random where the backoff's jitter comes from (seeded in simulations) */
    public Pusher(Controller controller, ExchangeTransport transport, ExchangeConfig config, Scheduler clock,
            RandomGenerator random) {
        this.controller = controller;
        this.transport = transport;
        this.config = config;
        this.clock = clock;
        this.random = random;
    }

    public synchronized Pusher start() {
        for (String peer : controller.peers()) {
            Flux<Object> triggers = Flux.merge(Mono.just("start"), controller.localChanges(),
                    Flux.interval(config.antiEntropyInterval(), clock));
            loops.add(triggers.onBackpressureLatest()
                    .concatMap(t -> pushUntilAcknowledged(peer), 1)
                    .subscribe(v -> { }, e -> LOG.error("{}: push loop to {} stopped: {}", controller.cluster(), peer,
                            e.toString())));
        }
        return this;
    }

    /** One push to {@code peer}, retried until the peer acknowledges it. */
    public Mono<Void> pushUntilAcknowledged(String peer) {
        return pushOnce(peer).retryWhen(Retry.from(signals -> signals.concatMap(s ->
                Mono.delay(config.retry().delay(s.totalRetriesInARow() + 1, random), clock))));
    }

    private Mono<Void> pushOnce(String peer) {
        return controller.stateFor(peer).flatMap(request -> transport.send(peer, request)
                .timeout(config.requestTimeout(), clock)
                .flatMap(answer -> controller.onAnswer(peer, request, answer)))
                .doOnError(e -> {
                    controller.failed(peer, e);
                    LOG.debug("{}: push to {} failed: {}", controller.cluster(), peer, e.toString());
                });
    }

    @Override
    public synchronized void dispose() {
        loops.forEach(Disposable::dispose);
        loops.clear();
    }

    @Override
    public synchronized boolean isDisposed() {
        return loops.isEmpty();
    }
}
