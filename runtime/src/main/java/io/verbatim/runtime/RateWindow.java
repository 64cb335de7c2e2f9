package io.verbatim.runtime;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Replication rates per remote over the last few seconds, verbatim and re-batched: sampled once a
 * second from the running totals, for the status page.
 */
final class RateWindow implements Disposable {
    static final int SECONDS = 5;

    /** Entries per second toward one remote. */
    record Rate(double verbatim, double rebatched) {
    }

    private record Sample(long atMs, Map<String, long[]> totals) {
    }

    private final Scheduler timer;
    private final Deque<Sample> samples = new ArrayDeque<>();
    private Disposable ticking = Disposables.disposed();

    RateWindow(Scheduler timer) {
        this.timer = timer;
    }

    /** @param totals per remote: {verbatim entries, re-batched entries} so far */
    void start(Supplier<Map<String, long[]>> totals) {
        ticking = Flux.interval(Duration.ZERO, Duration.ofSeconds(1), timer).subscribe(t -> {
            synchronized (samples) {
                samples.addLast(new Sample(timer.now(TimeUnit.MILLISECONDS), totals.get()));
                while (samples.size() > SECONDS + 1) {
                    samples.removeFirst();
                }
            }
        });
    }

    Map<String, Rate> snapshot() {
        Map<String, Rate> out = new TreeMap<>();
        synchronized (samples) {
            if (samples.size() < 2) {
                return out;
            }
            Sample first = samples.getFirst();
            Sample last = samples.getLast();
            double seconds = Math.max(1, last.atMs() - first.atMs()) / 1000.0;
            last.totals().forEach((remote, now) -> {
                long[] then = first.totals().getOrDefault(remote, new long[2]);
                out.put(remote, new Rate((now[0] - then[0]) / seconds, (now[1] - then[1]) / seconds));
            });
        }
        return out;
    }

    @Override
    public void dispose() {
        ticking.dispose();
    }

    @Override
    public boolean isDisposed() {
        return ticking.isDisposed();
    }
}
