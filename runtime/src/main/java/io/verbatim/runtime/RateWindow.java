package io.verbatim.runtime;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Replication rates per remote, verbatim and re-batched: sampled once a second from the running totals
 * on the injected clock, kept for the last {@link #HISTORY_SECONDS} seconds (the status page's charts),
 * and averaged over the last {@link #SECONDS} (its rate table).
 */
final class RateWindow implements Disposable {
    static final int SECONDS = 5;
    static final int HISTORY_SECONDS = 600;
    static final long STEP_MILLIS = 1000;

    /** Entries per second toward one remote. */
    record Rate(double verbatim, double rebatched) {
    }

    /**
     * The rates of each step between two samples, oldest first.
     *
     * @param atMillis when each step ended, on the runtime's clock
     * @param verbatim per remote, entries per second of each step (a remote that appeared late counts 0 before)
     * @param rebatched the same, re-batched
     */
    record History(List<Long> atMillis, Map<String, double[]> verbatim, Map<String, double[]> rebatched) {
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
        ticking = Flux.interval(Duration.ZERO, Duration.ofMillis(STEP_MILLIS), timer).subscribe(t -> {
            Sample s = new Sample(timer.now(TimeUnit.MILLISECONDS), totals.get());
            synchronized (samples) {
                samples.addLast(s);
                while (samples.size() > HISTORY_SECONDS + 1) {
                    samples.removeFirst();
                }
            }
        });
    }

    /** The rates over the last {@link #SECONDS} seconds; empty before two samples. */
    Map<String, Rate> snapshot() {
        Map<String, Rate> out = new TreeMap<>();
        List<Sample> recent = recent(SECONDS + 1);
        if (recent.size() < 2) {
            return out;
        }
        Sample first = recent.get(0);
        Sample last = recent.get(recent.size() - 1);
        last.totals().keySet().forEach(remote -> out.put(remote, rate(first, last, remote)));
        return out;
    }

    /** Every step's rates over the history kept (at most {@link #HISTORY_SECONDS} of them). */
    History history() {
        List<Sample> all = recent(HISTORY_SECONDS + 1);
        int steps = Math.max(0, all.size() - 1);
        List<Long> at = new ArrayList<>(steps);
        Map<String, double[]> verbatim = new LinkedHashMap<>();
        Map<String, double[]> rebatched = new LinkedHashMap<>();
        if (steps > 0) {
            for (String remote : new TreeMap<>(all.get(steps).totals()).keySet()) {
                verbatim.put(remote, new double[steps]);
                rebatched.put(remote, new double[steps]);
            }
        }
        for (int i = 0; i < steps; i++) {
            Sample from = all.get(i);
            Sample to = all.get(i + 1);
            at.add(to.atMs());
            for (String remote : verbatim.keySet()) {
                Rate r = rate(from, to, remote);
                verbatim.get(remote)[i] = r.verbatim();
                Objects.requireNonNull(rebatched.get(remote))[i] = r.rebatched();
            }
        }
        return new History(at, verbatim, rebatched);
    }

    private List<Sample> recent(int count) {
        synchronized (samples) {
            List<Sample> all = new ArrayList<>(samples);
            return all.subList(Math.max(0, all.size() - count), all.size());
        }
    }

    private static Rate rate(Sample from, Sample to, String remote) {
        double seconds = Math.max(1, to.atMs() - from.atMs()) / 1000.0;
        long[] then = from.totals().getOrDefault(remote, new long[2]);
        long[] now = to.totals().getOrDefault(remote, new long[2]);
        return new Rate(Math.max(0, now[0] - then[0]) / seconds, Math.max(0, now[1] - then[1]) / seconds);
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
