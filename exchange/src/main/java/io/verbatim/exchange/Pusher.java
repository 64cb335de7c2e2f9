package io.verbatim.exchange;

import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * <p>The backoff is Resilience4j's {@link IntervalFunction}; the waiting is a {@code Mono.delay} on the
 * injected scheduler (Resilience4j's own {@code RetryOperator} waits on Reactor's global parallel
 * scheduler, which would escape virtual time).
 */
public final class Pusher implements Disposable {
    private static final Logger LOG = Loggers.getLogger(Pusher.class);

    private final Controller controller;
    private final ExchangeTransport transport;
    private final ExchangeConfig config;
    private final Scheduler clock;
    private final IntervalFunction backoff;
    private final List<Disposable> loops = new ArrayList<>();

    public Pusher(Controller controller, ExchangeTransport transport, ExchangeConfig config, Scheduler clock) {
        this.controller = controller;
        this.transport = transport;
        this.config = config;
        this.clock = clock;
        this.backoff = config.retryJitter() > 0
                ? IntervalFunction.ofExponentialRandomBackoff(config.retryInitial(), 2.0, config.retryJitter(),
                        config.retryMax())
                : IntervalFunction.ofExponentialBackoff(config.retryInitial(), 2.0, config.retryMax());
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
        return pushOnce(peer).retryWhen(Retry.from(signals -> signals.concatMap(s -> {
            long millis = backoff.apply((int) Math.min(Integer.MAX_VALUE - 1, s.totalRetriesInARow() + 1));
            return Mono.delay(Duration.ofMillis(millis), clock);
        })));
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
