package io.verbatim.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * The {@code verbatim} command line: it reads the first word, prints the usage, hands the rest to that word's
 * command and answers its exit code. The demo runs from the examples' jar, which gives its own {@code demo}
 * command to {@link #run(String[], PrintWriter, PrintWriter, Callable)}; this jar's only says where it is.
 */
@Command(name = "verbatim", mixinStandardHelpOptions = true, version = "verbatim 0.1.0",
        description = "Geo-replication of Pulsar scalable topics, verbatim.")
public final class Verbatim implements Runnable {
    /** A check of the demo failed. */
    public static final int CHECKS_FAILED = 1;
    /** The input was unusable (configuration, file, argument). */
    public static final int BAD_INPUT = 2;
    /** What the usage says of {@code demo}, in this jar and in the examples' that runs it. */
    public static final String DEMO_DESCRIPTION = "Runs clusters on loopback replicating topics in every direction "
            + "while layouts change (two topics split at the same moment on two clusters, then a split and a "
            + "rebucket); prints progress, a summary and the checks. Exit code 1 when a check fails, 2 when the "
            + "input is unusable.";

    @Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with its output on {@code out} and {@code err}; returns the exit code. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        return run(args, out, err, new DemoElsewhere());
    }

    /**
     * Runs the command line with {@code demo} (a {@link Command} named {@code demo}) as its demo, its output on
     * {@code out} and {@code err}; returns the exit code.
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Callable<Integer> demo) {
        CommandLine cli = new CommandLine(new Verbatim());
        // in the order the usage lists them; added before out, err and the handlers are set, which reach only
        // the commands there at the time
        for (Object command : List.of(demo, new NodeCommand(), new HashCommand(), new InspectCommand(),
                new LayoutCommand(), new StatusCommand(), new AdminCommand(), new KeyCommand())) {
            cli.addSubcommand(command);
        }
        cli.setOut(out).setErr(err).setExecutionExceptionHandler((e, commandLine, parsed) -> {
            commandLine.getErr().println("verbatim: " + e.getMessage());
            return BAD_INPUT;
        });
        cli.setExitCodeExceptionMapper(e -> BAD_INPUT);
        return cli.execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
