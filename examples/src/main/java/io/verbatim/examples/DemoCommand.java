package io.verbatim.examples;

import io.verbatim.cli.Verbatim;
import io.verbatim.config.ConfigException;
import io.verbatim.config.Durations;
import io.verbatim.config.Samples;
import io.verbatim.config.VerbatimConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code verbatim demo}: the main job. Clusters on loopback replicate topics in every direction while layouts
 * change; it prints progress, a summary and the checks, and exits 1 when a check failed. The main class of the
 * examples' jar ({@code ./verbatim demo} runs it): its arguments are the demo's.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, description = Verbatim.DEMO_DESCRIPTION)
final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE",
            description = "a YAML configuration (default: the bundled config/samples/demo.yaml)")
    @Nullable Path config;

    @Option(names = "--duration", defaultValue = "20s", paramLabel = "TIME",
            description = "how long traffic runs (default ${DEFAULT-VALUE})")
    String duration;

    @Option(names = "--rate", defaultValue = "2000", description = "messages per second per cluster, shared by "
            + "the topics (default ${DEFAULT-VALUE})")
    int rate;

    @Option(names = "--topics", defaultValue = "3", description = "how many topics replicate (default "
            + "${DEFAULT-VALUE}): the configuration's, then more like its first")
    int topics;

    @Option(names = "--batch", defaultValue = "20", description = "messages per produce call (default "
            + "${DEFAULT-VALUE}); a call behind its rate takes what is due, up to 25 batches")
    int batch;

    @Option(names = "--keys", defaultValue = "1000", description = "distinct keys (default ${DEFAULT-VALUE})")
    int keys;

    @Option(names = "--seed", defaultValue = "1", description = "the traffic's random seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--rtt", paramLabel = "TIME",
            description = "a simulated round trip on replication traffic between clusters, e.g. 80ms")
    @Nullable String rtt;

    @Option(names = "--outage", paramLabel = "TIME",
            description = "take the last cluster's brokers down for this long at 75%% of the run, e.g. 2s")
    @Nullable String outage;

    @Option(names = "--storage", defaultValue = "memory", paramLabel = "memory|pulsar",
            description = "where segments live: in memory (default), or on an Apache Pulsar standalone broker this "
                    + "command starts in a child process for the run, each cluster in a namespace of its own")
    String storage;

    @Option(names = "--kill-leader", description = "kill the first cluster's controller leader (the metadata log's "
            + "leader replica) at 55%% of the run: another replica takes over")
    boolean killLeader;

    @Option(names = "--json", description = "print one JSON object with the figures and checks as the last line")
    boolean json;

    @Option(names = "--report", paramLabel = "FILE.html", description = "write an HTML report with a rate chart")
    @Nullable Path report;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        VerbatimConfig base;
        try {
            base = config == null ? Samples.demo() : VerbatimConfig.load(config);
            if (rtt != null) {
                base = base.withRtt(durationOf("--rtt", rtt));
            }
        } catch (ConfigException e) {
            spec.commandLine().getErr().println("verbatim demo: configuration " + (config == null ? "(bundled)"
                    : config) + ": " + e.getMessage());
            return Verbatim.BAD_INPUT;
        }
        Duration d = durationOf("--duration", duration);
        if (rate < 1 || batch < 1 || keys < 1 || topics < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--rate, --batch, --keys and --topics must be at least 1");
        }
        if (topics > 1000) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--topics " + topics + " is above 1000");
        }
        boolean onPulsar = switch (storage.toLowerCase(Locale.ROOT)) {
            case "memory" -> false;
            case "pulsar" -> true;
            default -> throw new CommandLine.ParameterException(spec.commandLine(), "--storage '" + storage
                    + "' is not one of memory, pulsar");
        };
        // With --json, stdout carries only the JSON line: people's output goes to stderr.
        PrintWriter progress = json ? spec.commandLine().getErr() : out;
        Duration down = outage == null ? Duration.ZERO : durationOf("--outage", outage);
        Demo.Result result;
        if (onPulsar) {
            DemoPulsar pulsar = DemoPulsar.start(progress);
            boolean failed = true;
            try {
                result = new Demo(new Demo.Options(pulsar.configure(base), d, rate, batch, keys, seed, down, topics,
                        killLeader), progress).run();
                failed = !result.passed();
            } finally {
                pulsar.close(failed, progress);
            }
        } else {
            result = new Demo(new Demo.Options(base, d, rate, batch, keys, seed, down, topics, killLeader),
                    progress).run();
        }
        PrintWriter summaryTo = progress;
        DemoOutput.summary(result, summaryTo);
        if (report != null) {
            Files.writeString(report, DemoOutput.html(result));
            summaryTo.println("report written to " + report.toAbsolutePath());
        }
        if (json) {
            out.println(DemoOutput.jsonLine(result));
        }
        out.flush();
        return result.passed() ? 0 : Verbatim.CHECKS_FAILED;
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * Runs {@code verbatim demo} with {@code args} after {@code demo}, as the command line does (usage, errors, exit
     * codes); returns the exit code.
     */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        String[] line = new String[args.length + 1];
        line[0] = "demo";
        System.arraycopy(args, 0, line, 1, args.length);
        return Verbatim.run(line, out, err, new DemoCommand());
    }

    private Duration durationOf(String option, String text) {
        try {
            return Durations.parse(option, text);
        } catch (ConfigException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
