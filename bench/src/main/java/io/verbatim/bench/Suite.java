package io.verbatim.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one benchmark command (issue 15): every measure of the issue, each in warm-up rounds then timed
 * rounds with its numerator and denominator side by side, one table at the end (also written as JSON).
 * A measure without a benchmark is printed as "not measured", one whose benchmark is not called from here
 * yet as "not wired yet": never a number for either. A missed goal is printed as missed.
 *
 * <p>Run: {@code ./verbatim bench [options]}, or {@code java -Xms2g -Xmx2g -XX:+UseParallelGC -cp
 * bench/target/benchmarks.jar io.verbatim.bench.Suite [options]} from the repository's root; {@code --help}
 * lists the options. Progress goes to standard error, the table to standard output.
 */
final class Suite {
    /** The JSON's path unless {@code --json}: {@code -Dverbatim.bench.json}, else under bench/target. */
    static final String DEFAULT_JSON = System.getProperty("verbatim.bench.json", "bench/target/bench-results.json");

    private Suite() {
    }

    /** Sizes of a run: the shipped ones, or tiny ({@code --quick}). */
    record Sizes(boolean quick) {
        int pipelineEntries() {
            return quick ? 100 : 2000;
        }

        int pulsarEntries() {
            return quick ? 20 : 300;
        }

        int windowEntries() {
            return quick ? 200 : 20_000;
        }

        double raftSeconds() {
            return quick ? 0.3 : 2.0;
        }

        /** P4's backlog per run: four bandwidth-delay products of 1 Gbit/s at 250 ms (steady state). */
        long linkBytes() {
            return quick ? 5_000_000 : 125_000_000;
        }

        /** P8's backlog: a hundred times the child's 64 MiB heap (ten times with --quick). */
        long backlogBytes() {
            return (quick ? 10 : 100) * BacklogBench.HEAP;
        }

        /** Segments of the smaller handover measure. */
        int handoverSmall() {
            return quick ? 10 : 100;
        }

        /** Segments of the larger handover measure. */
        int handoverLarge() {
            return quick ? 100 : 1000;
        }

        /** The replication CPU measure's traffic per member count and round. */
        long cpuTrafficBytes() {
            return quick ? 8L << 20 : 64L << 20;
        }

        /** P5's window per phase: long enough that the budget's burst and the last entry in flight are noise. */
        double budgetWindowSeconds() {
            return quick ? 0.25 : 4.0;
        }
    }

    /** Makes a benchmark, given the sizes and where it may print its progress. */
    interface Factory {
        Bench create(Sizes sizes, PrintStream progress) throws Exception;
    }

    /** Rows that come from one benchmark (factory non-null), or that have none ({@code status}, {@code why}). */
    record Entry(List<Row.Spec> specs, @Nullable Factory factory, Row.Status status, String why, boolean pulsar) {
        static Entry bench(Factory factory, boolean pulsar, Row.Spec... specs) {
            return new Entry(List.of(specs), factory, Row.Status.MEASURED, "", pulsar);
        }

        static Entry missing(Row.Status status, String why, Row.Spec... specs) {
            return new Entry(List.of(specs), null, status, why, false);
        }
    }

    /** Every measure of issue 15, in the order, then issue 25's (a cluster's broker members). */
    static List<Entry> catalog() {
        List<Entry> all = new ArrayList<>();
        all.add(Entry.bench((sizes, log) -> PipelineBench.ratios(sizes.pipelineEntries(), sizes.quick() ? 0.02 : 1.0,
                log), false,
                PipelineBench.P1, PipelineBench.P2));
        all.add(Entry.bench((sizes, log) -> PulsarBench.ratios(sizes.pulsarEntries(), log), true,
                PulsarBench.P1, PulsarBench.P2));
        all.add(Entry.bench((sizes, log) -> SlowPathBench.ratios(sizes.pipelineEntries(), log), false,
                SlowPathBench.P3));
        all.add(Entry.bench((sizes, log) -> LinkBench.ratios(sizes.linkBytes(), log), false,
                LinkBench.SPECS.toArray(Row.Spec[]::new)));
        all.add(Entry.bench((sizes, log) -> PipelineBench.roundTrip(sizes.pipelineEntries(), log), false,
                PipelineBench.P4_RTT));
        all.add(Entry.bench((sizes, log) -> WindowBench.ratios(sizes.windowEntries(), log), false,
                WindowBench.P4_RUNTIME));
        all.add(Entry.bench((sizes, log) -> BudgetBench.ratios(sizes.budgetWindowSeconds(), log), false,
                BudgetBench.SPECS.toArray(Row.Spec[]::new)));
        all.add(Entry.bench((sizes, log) -> ExchangeBench.p6Bench(sizes.quick() ? 5 : 20, log), false,
                ExchangeBench.P6));
        all.add(Entry.bench((sizes, log) -> DelegationBench.ratios(sizes.raftSeconds(), log), false,
                DelegationBench.P7_EGRESS, DelegationBench.P7_LATENCY));
        all.add(Entry.bench((sizes, log) -> RaftBench.baseline(sizes.raftSeconds(), log), false,
                RaftBench.P7_BASELINE));
        all.add(Entry.bench((sizes, log) -> BacklogBench.ratios(sizes.backlogBytes(), log), false, BacklogBench.P8));
        all.add(Entry.bench((sizes, log) -> ExchangeBench.p9Bench(sizes.quick() ? 2000 : 100_000, log), false,
                ExchangeBench.P9));
        all.add(Entry.bench((sizes, log) -> HandoverBench.ratios(HandoverBench.SMALL, sizes.handoverSmall(), log),
                true, HandoverBench.SMALL.toArray(Row.Spec[]::new)));
        all.add(Entry.bench((sizes, log) -> HandoverBench.ratios(HandoverBench.LARGE, sizes.handoverLarge(), log),
                true, HandoverBench.LARGE.toArray(Row.Spec[]::new)));
        all.add(Entry.bench((sizes, log) -> ReplicationCpuBench.ratios(sizes.cpuTrafficBytes(), log), true,
                ReplicationCpuBench.SPECS.toArray(Row.Spec[]::new)));
        return all;
    }

    /** The command line. */
    record Options(int rounds, int warmUp, List<String> only, boolean pulsar, Path json, boolean quick, boolean help,
            boolean list) {
        static final String USAGE = """
                Usage: ./verbatim bench [--quick] [--rounds N] [--warmup N] [--only ID,...] [--pulsar] [--json PATH]
                Runs every measure of issue 15 in rounds (numerator and denominator side by side in each round),
                prints one table and writes it as JSON.
                  --rounds N     timed rounds per measure (default 5; 3 with --quick)
                  --warmup N     warm-up rounds per measure, not counted (default 1)
                  --only IDS     only these measures, comma-separated: P4 selects every P4/..., P4/100ms
                                 only that one (--list shows the ids)
                  --pulsar       also the measures on a Pulsar broker (starts one as a child process);
                                 naming a Pulsar measure in --only runs it too (by its id, or by a
                                 family of Pulsar measures only: handover100, handover1000, cpu)
                  --json PATH    where to write the JSON (default %s)
                  --quick        tiny sizes: a smoke test of the harness, not figures
                  --list         the measures, their ids and goals, then exit
                  -h, --help     this help
                Exit status: 0 when every measure ran (missed goals included), 1 if one failed, 2 on a bad option.
                """.formatted(DEFAULT_JSON);

        static Options parse(String... args) {
            Integer rounds = null;
            int warmUp = 1;
            List<String> only = new ArrayList<>();
            boolean pulsar = false;
            Path json = Path.of(DEFAULT_JSON);
            boolean quick = false;
            boolean help = false;
            boolean list = false;
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                String value = null;
                int eq = a.indexOf('=');
                if (a.startsWith("--") && eq > 0) {
                    value = a.substring(eq + 1);
                    a = a.substring(0, eq);
                }
                switch (a) {
                    case "-h", "--help" -> help = true;
                    case "--list" -> list = true;
                    case "--quick" -> quick = true;
                    case "--pulsar" -> pulsar = true;
                    case "--rounds", "--warmup", "--warm-up", "--only", "--json" -> {
                        if (value == null) {
                            if (i + 1 >= args.length) {
                                throw new IllegalArgumentException(a + " needs a value");
                            }
                            value = args[++i];
                        }
                        switch (a) {
                            case "--rounds" -> rounds = count(a, value, 1);
                            case "--only" -> {
                                for (String id : value.split(",")) {
                                    if (!id.isBlank()) {
                                        only.add(id.strip());
                                    }
                                }
                            }
                            case "--json" -> json = Path.of(value);
                            default -> warmUp = count(a, value, 0);
                        }
                    }
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            return new Options(rounds != null ? rounds : quick ? 3 : 5, warmUp, only, pulsar, json, quick, help, list);
        }

        private static int count(String option, String value, int least) {
            try {
                int n = Integer.parseInt(value);
                if (n >= least) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // the message below
            }
            throw new IllegalArgumentException(option + " takes a whole number ≥ " + least + ", not " + value);
        }

        /**
         * Whether a row is asked for: in --only (exactly, or by the part before '/'), Pulsar ones only if asked
         * (--pulsar, or named: by their id, or by a family that has Pulsar measures only).
         */
        boolean selects(Row.Spec spec, boolean onPulsar) {
            String family = family(spec);
            boolean named = only.stream().anyMatch(id -> id.equalsIgnoreCase(spec.id())
                    || onPulsar && id.equalsIgnoreCase(family) && PULSAR_ONLY.get().contains(family));
            boolean byFamily = only.isEmpty() || only.stream().anyMatch(id -> id.equalsIgnoreCase(family));
            return named || byFamily && (!onPulsar || pulsar);
        }
    }

    /** The part of a row's id before its first '/'. */
    static String family(Row.Spec spec) {
        return spec.id().contains("/") ? spec.id().substring(0, spec.id().indexOf('/')) : spec.id();
    }

    /** The families whose every measure runs on a Pulsar broker (naming one in --only runs it). */
    private static final Supplier<Set<String>> PULSAR_ONLY = () -> {
        Set<String> pulsar = new LinkedHashSet<>();
        Set<String> other = new LinkedHashSet<>();
        for (Entry e : catalog()) {
            e.specs().forEach(s -> (e.pulsar() ? pulsar : other).add(family(s)));
        }
        pulsar.removeAll(other);
        return pulsar;
    };

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("verbatim bench: " + e.getMessage());
            System.err.print(Options.USAGE);
            System.exit(2);
            return;
        }
        if (options.help()) {
            System.out.print(Options.USAGE);
            System.exit(0);
        }
        if (options.list()) {
            for (Entry e : catalog()) {
                for (Row.Spec s : e.specs()) {
                    System.out.printf(Locale.ROOT, "%-15s %-10s %s%s%n", s.id(), s.goal().text(), s.measure(),
                            e.factory() == null ? " (" + e.status().text() + ")" : e.pulsar() ? " (--pulsar)" : "");
                }
            }
            System.exit(0);
        }
        Report report;
        try {
            report = run(options, System.err);
        } catch (IllegalArgumentException e) {
            System.err.println("verbatim bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        System.out.println();
        System.out.print(report.table());
        report.writeJson(options.json());
        System.out.println();
        System.out.println("written to " + options.json().toAbsolutePath());
        System.exit(report.rows().stream().anyMatch(r -> r.status() == Row.Status.FAILED) ? 1 : 0);
    }

    /** Runs what {@code options} selects; progress to {@code progress}. */
    static Report run(Options options, PrintStream progress) {
        Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        Machine machine = Machine.current();
        long t0 = System.nanoTime();
        List<Entry> chosen = new ArrayList<>();
        Set<String> known = new LinkedHashSet<>();
        for (Entry e : catalog()) {
            e.specs().forEach(s -> {
                known.add(s.id().toLowerCase(Locale.ROOT));
                known.add(s.id().replaceFirst("/.*", "").toLowerCase(Locale.ROOT));
            });
            if (e.specs().stream().anyMatch(s -> options.selects(s, e.pulsar()))) {
                chosen.add(e);
            }
        }
        for (String id : options.only()) {
            if (!known.contains(id.toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("no measure " + id + " (--list shows them)");
            }
        }
        progress.printf(Locale.ROOT, "verbatim bench: machine %s%n", machine);
        List<Row> rows = new ArrayList<>();
        int benches = (int) chosen.stream().filter(e -> e.factory() != null).count();
        int n = 0;
        for (Entry e : chosen) {
            List<Row> got;
            Factory factory = e.factory();
            if (factory == null) {
                got = e.specs().stream().map(s -> Row.without(s, e.status(), e.why())).toList();
            } else {
                n++;
                got = measure(factory, e.specs(), new Sizes(options.quick()), options.rounds(), options.warmUp(),
                        progress, "[" + n + "/" + benches + "] ");
            }
            for (Row r : got) {
                if (options.selects(r.spec(), e.pulsar())) {
                    rows.add(r);
                }
            }
        }
        return new Report(machine, options.rounds(), options.warmUp(), options.quick(), started.toString(),
                (System.nanoTime() - t0) / 1e9, rows);
    }

    /**
     * Runs one benchmark: {@code warmUp} rounds, then {@code rounds}; a row per spec. If it throws, its rows
     * are marked failed with what it threw (the rounds before kept) and the suite goes on.
     */
    static List<Row> measure(Factory factory, List<Row.Spec> specs, Sizes sizes, int rounds, int warmUp,
            PrintStream progress, String prefix) {
        String ids = String.join(", ", specs.stream().map(Row.Spec::id).toList());
        List<List<Row.Sample>> samples = new ArrayList<>();
        specs.forEach(s -> samples.add(new ArrayList<>()));
        long t0 = System.nanoTime();
        progress.printf(Locale.ROOT, "%s%s: starting%n", prefix, ids);
        try (Bench bench = factory.create(sizes, progress)) {
            if (!bench.specs().equals(specs)) {
                throw new IllegalStateException("the benchmark measures " + bench.specs() + ", not " + specs);
            }
            for (int r = -warmUp; r < rounds; r++) {
                String which = r < 0 ? "warm-up " + (r + warmUp + 1) + "/" + warmUp : "round " + (r + 1) + "/" + rounds;
                progress.printf(Locale.ROOT, "%s%s: %s...%n", prefix, ids, which);
                long r0 = System.nanoTime();
                List<Row.Sample> got = bench.round(r);
                if (got.size() != specs.size()) {
                    throw new IllegalStateException(got.size() + " samples for " + specs.size() + " rows");
                }
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < specs.size(); i++) {
                    Row.Sample s = got.get(i);
                    line.append(i == 0 ? "" : "; ").append(specs.get(i).id()).append(' ')
                            .append(Report.ratio(s.numerator() / s.denominator()));
                    if (r >= 0) {
                        samples.get(i).add(s);
                    }
                }
                progress.printf(Locale.ROOT, "%s%s: %s: %s (%.1f s)%n", prefix, ids, which, line,
                        (System.nanoTime() - r0) / 1e9);
            }
        } catch (Exception | Error e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (e instanceof Error && !(e instanceof AssertionError || e instanceof OutOfMemoryError)) {
                throw (Error) e;
            }
            String why = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage());
            progress.printf(Locale.ROOT, "%s%s: FAILED: %s%n", prefix, ids, why);
            e.printStackTrace(progress);
            List<Row> failed = new ArrayList<>();
            for (int i = 0; i < specs.size(); i++) {
                failed.add(Row.measured(specs.get(i), samples.get(i)).failed(why));
            }
            return failed;
        }
        progress.printf(Locale.ROOT, "%s%s: done in %.1f s%n", prefix, ids, (System.nanoTime() - t0) / 1e9);
        List<Row> out = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            out.add(Row.measured(specs.get(i), samples.get(i)));
        }
        return out;
    }
}
