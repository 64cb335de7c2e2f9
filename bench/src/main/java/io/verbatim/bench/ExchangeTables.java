package io.verbatim.bench;

import static io.verbatim.bench.ExchangeMeasures.heapAfterGc;
import static io.verbatim.bench.ExchangeMeasures.max;
import static io.verbatim.bench.ExchangeMeasures.median;
import static io.verbatim.bench.ExchangeMeasures.min;
import static io.verbatim.bench.ExchangeMeasures.need;
import static io.verbatim.bench.ExchangeMeasures.pause;
import static io.verbatim.bench.ExchangeMeasures.threadCpu;
import static io.verbatim.bench.P6Run.WARM_UP_PUSHES;
import static io.verbatim.bench.P6Run.WARM_UP_ROUNDS;
import static io.verbatim.bench.P6Run.bareRoundTrips;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import com.sun.management.OperatingSystemMXBean;
import io.verbatim.bench.P9Pair.Counting;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ExchangeConfig;
import io.verbatim.exchange.Pusher;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.Map;
import reactor.core.scheduler.Schedulers;

/**
 * The tables of {@link ExchangeBench}'s own run (not the suite's): P6's round trip, the bare POST beside it
 * and the convergence; P9's convergence, anti-entropy round, its CPU split between sender and receiver, and
 * the heap.
 */
final class ExchangeTables {
    private ExchangeTables() {
    }

    /** P6: a warmed run of {@code rounds} splits, its round trips and convergence, and the bare POST beside them. */
    static void p6(int rounds) {
        // 300 pushes left the round trip's code at the JIT's profiling tier, about twice as slow: a whole run
        // first (pushes, then splits and their convergence), on clusters thrown away, then the measured one.
        P6Run.measure(WARM_UP_PUSHES, WARM_UP_ROUNDS);
        P6Run run = P6Run.measure(300, rounds);
        double[] rtt = run.rtt();
        double[] converge = run.converge();
        double[] bareCpu = new double[rounds];
        double[] bare = bareRoundTrips(rounds, run.bodyBytes(), run.answerBytes(), bareCpu);
        double medianRtt = median(rtt);
        double medianConverge = median(converge);
        System.out.println("| figure | value |");
        System.out.println("| --- | --- |");
        System.out.printf(Locale.ROOT, "| one exchange round trip (loopback, quiet, median of %d) | %.2f ms (min %.2f, max %.2f) |%n",
                rounds, medianRtt, min(rtt), max(rtt));
        System.out.printf(Locale.ROOT, "|   CPU of all Java threads per round trip (median) | %.3f ms |%n", median(run.rttCpu()));
        System.out.printf(Locale.ROOT, "| bare Reactor Netty POST of as many bytes, after as long idle (median) | %.2f ms (min %.2f, max %.2f) |%n",
                median(bare), min(bare), max(bare));
        System.out.printf(Locale.ROOT, "|   CPU of all Java threads per bare POST (median) | %.3f ms |%n", median(bareCpu));
        System.out.printf(Locale.ROOT, "| convergence of 3 clusters after a split (median) | %.2f ms (min %.2f, max %.2f) |%n",
                medianConverge, min(converge), max(converge));
        System.out.printf(Locale.ROOT, "| P6 convergence / round trip | %.2f |%n", medianConverge / medianRtt);
    }

    /**
     * P9: two controllers over HTTP on loopback (default config: 4 MiB bodies, 30 s anti-entropy) holding
     * {@code topics} topics, three in ten laid out differently on the two sides. Measures the time until
     * both hold the join of every topic, then a full anti-entropy round once converged: its calls and
     * bytes, the process CPU it costs (both sides and HTTP), and, run in-process on one thread, the
     * sender's part (state, encoding, parsing the answer, folding it) and the receiver's (parsing,
     * folding every topic, the answer).
     */
    static void p9(int topics) {
        P9Pair pair = P9Pair.converged(topics);
        Controller a = pair.a();
        Controller b = pair.b();
        Counting toB = pair.toB();
        Counting toA = pair.toA();
        ExchangeConfig config = pair.config();
        double convergeMillis = pair.convergeMillis();
        long convergeCalls = toB.calls.get() + toA.calls.get();
        long convergeBytes = toB.sent.get() + toA.sent.get() + toB.answered.get() + toA.answered.get();
        pause(); // calls still out when the pushers were disposed finish
        long heap = heapAfterGc();

        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Pusher probe = new Pusher(a, toB, config, Schedulers.parallel());
        int measured = 5;
        double[] threads = new double[measured];
        double[] process = new double[measured];
        double[] wall = new double[measured];
        int warmUp = warmUpRounds(topics);
        for (int round = 0; round < measured + warmUp; round++) {
            toB.reset();
            Map<Long, Long> t0s = threadCpu();
            long c0 = os.getProcessCpuTime();
            long w0 = System.nanoTime();
            probe.pushUntilAcknowledged("b").block();
            if (round >= warmUp) {
                int slot = round - warmUp;
                wall[slot] = (System.nanoTime() - w0) / 1e6;
                process[slot] = (os.getProcessCpuTime() - c0) / 1e6;
                threadCpu().forEach((id, nanos) -> threads[slot] += (nanos - t0s.getOrDefault(id, 0L)) / 1e6);
            }
        }
        InProcess split = inProcess(a, b, measured, warmUp);
        pair.stop();

        System.out.println();
        System.out.printf(Locale.ROOT, "| P9: %,d topics, two controllers over HTTP (maxBodyBytes %d KiB) | value |%n",
                topics, config.maxBodyBytes() / 1024);
        System.out.println("| --- | --- |");
        row("topics laid out differently on the two sides", "%,d", (long) Math.ceil(topics * 0.3));
        row("convergence: both sides hold the join of every topic", "%.0f ms (%d calls, %.1f MB both ways)",
                convergeMillis, convergeCalls, convergeBytes / 1e6);
        row("anti-entropy push a -> b, once converged", "%d calls, %.1f MB sent, %.1f MB answered",
                toB.calls.get(), toB.sent.get() / 1e6, toB.answered.get() / 1e6);
        row("  largest call", "%.0f KB", toB.largest.get() / 1e3);
        row("  wall time (median of " + measured + ")", "%.0f ms", median(wall));
        row("  CPU of all Java threads, both sides + HTTP (median)", "%.0f ms (%.1f µs per topic)", median(threads),
                median(threads) * 1000 / topics);
        row("  process CPU, also GC and JIT (median)", "%.0f ms (%.1f µs per topic)", median(process),
                median(process) * 1000 / topics);
        row("  sender CPU in-process (states, encoding, parsing and folding the answer)", "%.0f ms (%.1f µs per topic)",
                split.sender(), split.sender() * 1000 / topics);
        row("  receiver CPU in-process (parsing, folding every topic, the answer)", "%.0f ms (%.1f µs per topic)",
                split.receiver(), split.receiver() * 1000 / topics);
        row("  whole round in-process, one thread (the earlier P9 figure)", "%.0f ms (%.1f µs per topic)",
                split.sender() + split.receiver(), (split.sender() + split.receiver()) * 1000 / topics);
        row("heap used after GC (two controllers, two stores)", "%.0f MB (%.1f KB per topic and side)", heap / 1e6,
                heap / 1e3 / topics / 2);
    }

    /** Rounds before measuring: enough topics through the code for the JIT to be done with it (a small fleet takes more). */
    private static int warmUpRounds(int topics) {
        return Math.max(2, Math.min(30, 300_000 / topics));
    }

    /** The sender's and the receiver's CPU of one round, in milliseconds (medians). */
    private record InProcess(double sender, double receiver) {
    }

    private static InProcess inProcess(Controller a, Controller b, int measured, int warmUp) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[] sender = new double[measured];
        double[] receiver = new double[measured];
        for (int round = 0; round < measured + warmUp; round++) {
            long s0 = threads.getCurrentThreadCpuTime();
            ExchangeRequest request = need(a.stateFor("b").block());
            byte[] wire = request.toByteArray();
            long r0 = threads.getCurrentThreadCpuTime();
            byte[] answer = need(b.receive(parse(wire, ExchangeRequest.parser())).block()).toByteArray();
            long s1 = threads.getCurrentThreadCpuTime();
            a.onAnswer("b", request, parse(answer, ExchangeResponse.parser())).block();
            long end = threads.getCurrentThreadCpuTime();
            if (round >= warmUp) {
                sender[round - warmUp] = ((r0 - s0) + (end - s1)) / 1e6;
                receiver[round - warmUp] = (s1 - r0) / 1e6;
            }
        }
        return new InProcess(median(sender), median(receiver));
    }

    private static void row(String figure, String format, Object... values) {
        System.out.printf(Locale.ROOT, "| %s | " + format + " |%n", prepend(figure, values));
    }

    private static Object[] prepend(Object first, Object[] rest) {
        Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    private static <T> T parse(byte[] wire, Parser<T> parser) {
        try {
            return parser.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e);
        }
    }
}
