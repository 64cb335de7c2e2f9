package io.verbatim.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * P8: a backlog a hundred times the heap replicated under {@code -Xmx64m}, in a child JVM
 * ({@link BacklogChild}) on this JVM's class path. The numerator is the backlog replicated, the
 * denominator the child's maximum heap; the note says whether it completed and the heap it took.
 *
 * <p>Run: {@code java -cp bench/target/benchmarks.jar io.verbatim.bench.BacklogBench [MiB] [rounds]}
 */
final class BacklogBench {
    static final long HEAP = 64L << 20;
    /** The child's window and broker budget: a quarter of its heap (the default 64 MiB would be all of it). */
    static final long WINDOW = 16L << 20;
    static final long RTT_MS = 10;

    static final Row.Spec P8 = new Row.Spec("P8", "a backlog 100× the heap replicated under -Xmx64m (window and"
            + " broker budget 16 MiB, 10 ms RTT)", "backlog", "heap", "bytes", Goal.words("completes, heap bounded"));

    private BacklogBench() {
    }

    public static void main(String[] args) {
        long mib = args.length > 0 ? Long.parseLong(args[0]) : 100 * 64;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        String started = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        long t0 = System.nanoTime();
        List<Row> rows = Suite.measure((sizes, log) -> ratios(mib << 20, log), List.of(P8), new Suite.Sizes(false),
                rounds, 0, System.out, "");
        System.out.println();
        System.out.print(new Report(Machine.current(), rounds, 0, false, started, (System.nanoTime() - t0) / 1e9,
                rows).table());
        System.exit(0);
    }

    static Bench ratios(long backlog, PrintStream log) {
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P8);
            }

            @Override
            public List<Row.Sample> round(int round) throws Exception {
                Map<String, String> r = child(backlog, log);
                double mib = 1 << 20;
                String note = String.format(Locale.ROOT, "completed %s: %.0f MiB, peak heap used %.1f MiB, peak live"
                        + " (after a full GC) %.1f MiB, peak in flight %.1f MiB (window %.0f MiB), %s s, %s",
                        r.get("completed"), Long.parseLong(r.get("bytes")) / mib,
                        Long.parseLong(r.get("peakUsed")) / mib, Long.parseLong(r.get("peakLive")) / mib,
                        Long.parseLong(r.get("peakInFlight")) / mib, WINDOW / mib, r.get("seconds"), r.get("gc"));
                log.println("  " + note);
                return List.of(new Row.Sample(Double.parseDouble(r.get("bytes")), Double.parseDouble(r.get("maxHeap")),
                        note));
            }

            @Override
            public void close() {
                // each round's child has exited
            }
        };
    }

    /** Runs the child; its {@code P8} line as keys and values. Throws unless it completed. */
    static Map<String, String> child(long backlog, PrintStream log) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx" + (HEAP >> 20) + "m", "-Xms" + (HEAP >> 20) + "m",
                "-cp", System.getProperty("java.class.path"), BacklogChild.class.getName(), Long.toString(backlog),
                Long.toString(WINDOW), Long.toString(WINDOW), Long.toString(RTT_MS)).redirectErrorStream(true);
        Process p = pb.start();
        ArrayDeque<String> tail = new ArrayDeque<>();
        Map<String, String> result = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("P8 ")) {
                    result = new HashMap<>();
                    for (String kv : line.substring(3).split(" ")) {
                        int eq = kv.indexOf('=');
                        if (eq > 0) {
                            result.put(kv.substring(0, eq), kv.substring(eq + 1));
                        }
                    }
                }
                tail.addLast(line);
                if (tail.size() > 20) {
                    tail.removeFirst();
                }
            }
        }
        if (!p.waitFor(30, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("the -Xmx64m child did not end in 30 minutes");
        }
        if (p.exitValue() != 0 || result == null || !"true".equals(result.get("completed"))) {
            throw new IllegalStateException("the -Xmx64m child did not complete (exit " + p.exitValue() + "): "
                    + String.join(" | ", tail));
        }
        return result;
    }
}
