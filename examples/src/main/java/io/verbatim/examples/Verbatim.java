package io.verbatim.examples;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/** The {@code verbatim} command line. */
@Command(name = "verbatim", mixinStandardHelpOptions = true, version = "verbatim 0.1.0",
        description = "Geo-replication of Pulsar scalable topics, verbatim.",
        subcommands = {DemoCommand.class, NodeCommand.class, HashCommand.class, InspectCommand.class, LayoutCommand.class,
            StatusCommand.class, AdminCommand.class, KeyCommand.class})
public final class Verbatim implements Runnable {
    /** A check of the demo failed. */
    static final int CHECKS_FAILED = 1;
    /** The input was unusable (configuration, file, argument). */
    static final int BAD_INPUT = 2;

    @Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with its output on {@code out} and {@code err}; returns the exit code. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new Verbatim()).setOut(out).setErr(err)
                .setExecutionExceptionHandler((e, commandLine, parsed) -> {
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
