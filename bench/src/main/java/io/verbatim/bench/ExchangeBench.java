package io.verbatim.bench;

import static io.verbatim.bench.ExchangeMeasures.median;
import static io.verbatim.bench.ExchangeMeasures.min;
import static io.verbatim.bench.ExchangeMeasures.pause;
import static io.verbatim.bench.ExchangeMeasures.threadCpu;
import static io.verbatim.bench.P6Run.WARM_UP_PUSHES;
import static io.verbatim.bench.P6Run.WARM_UP_ROUNDS;

import io.verbatim.bench.P9Pair.Counting;
import io.verbatim.exchange.Pusher;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * The exchange's figures: P6, convergence time after a split ÷ one exchange round trip (three clusters
 * over HTTP on loopback); P9, a large fleet between two clusters over HTTP: how long until they converge,
 * and what an anti-entropy round costs once they have (calls, bytes, CPU per topic on each side, heap).
 *
 * <p>Run: {@code java -Xmx4g -cp bench/target/benchmarks.jar io.verbatim.bench.ExchangeBench [rounds] [topics]}
 * ({@code rounds} of P6, default 20; {@code topics} of P9, default 100,000).
 */
final class ExchangeBench {
    private ExchangeBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int topics = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        ExchangeTables.p6(rounds);
        ExchangeTables.p9(topics);
        System.exit(0);
    }

    /** P6 in the suite: convergence after a split ÷ one quiet exchange round trip, medians of a run's rounds. */
    static final Row.Spec P6 = new Row.Spec("P6", "convergence after a split ÷ one exchange round trip, 3 clusters"
            + " over HTTP on loopback", "convergence", "round trip", "ms", Goal.atMost(3));

    /**
     * P6 for {@link Suite}: a warm-up round is a whole run on clusters thrown away (the JIT's last tier for the
     * pushes and the splits); each measured round is a run of {@code rounds} splits on fresh clusters.
     */
    static Bench p6Bench(int rounds, PrintStream log) {
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P6);
            }

            @Override
            public List<Row.Sample> round(int round) {
                if (round < 0) {
                    P6Run.measure(WARM_UP_PUSHES, WARM_UP_ROUNDS);
                }
                P6Run run = P6Run.measure(300, rounds);
                double rtt = median(run.rtt());
                double converge = median(run.converge());
                log.printf(Locale.ROOT, "  round trip %.2f ms (min %.2f), convergence %.2f ms, CPU per round trip %.3f ms%n",
                        rtt, min(run.rtt()), converge, median(run.rttCpu()));
                return List.of(Row.Sample.of(converge, rtt));
            }

            @Override
            public void close() {
                // each run closes its servers
            }
        };
    }

    /** P9 in the suite: CPU of one anti-entropy round between two converged controllers over HTTP, per topic. */
    static final Row.Spec P9 = new Row.Spec("P9", "anti-entropy round between two converged controllers over HTTP:"
            + " CPU of all Java threads per topic (ms)", "CPU ms", "topics", "",
            Goal.words("measured; batched and chunked"));

    /**
     * P9 for {@link Suite}: two controllers with {@code topics} topics (30 % laid out differently) converge once;
     * each round is then one anti-entropy push a → b, its CPU of all Java threads over the topics, with its calls
     * and largest body in the round's note (the push is chunked to the body limit).
     */
    static Bench p9Bench(int topics, PrintStream log) {
        return new Bench() {
            private @Nullable P9Pair pair;

            @Override
            public List<Row.Spec> specs() {
                return List.of(P9);
            }

            @Override
            public List<Row.Sample> round(int round) {
                if (pair == null) {
                    long t0 = System.nanoTime();
                    P9Pair started = P9Pair.converged(topics);
                    pause(); // calls still out when the pushers were disposed finish
                    log.printf(Locale.ROOT, "  %,d topics converged in %.0f ms%n", topics, (System.nanoTime() - t0) / 1e6);
                    pair = started;
                }
                P9Pair p = pair;
                Counting transport = p.toB();
                Pusher probe = new Pusher(p.a(), transport, p.config(), Schedulers.parallel());
                transport.reset();
                Map<Long, Long> before = threadCpu();
                probe.pushUntilAcknowledged("b").block();
                double[] cpu = {0};
                threadCpu().forEach((id, nanos) -> cpu[0] += (nanos - before.getOrDefault(id, 0L)) / 1e6);
                String note = String.format(Locale.ROOT, "%d calls, largest %.0f KB, %.1f µs per topic",
                        transport.calls.get(), transport.largest.get() / 1e3, cpu[0] * 1000 / topics);
                log.println("  " + note);
                return List.of(new Row.Sample(cpu[0], topics, note));
            }

            @Override
            public void close() {
                if (pair != null) {
                    pair.stop();
                }
            }
        };
    }
}
