package io.verbatim.cli;

import io.verbatim.config.ConfigException;
import io.verbatim.config.Durations;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.runtime.Node;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code verbatim node}: one cluster of a configuration as a long-running process. It stops cleanly on
 * SIGTERM or SIGINT (no more messages taken, replication drained, sessions closed, state written) and exits 0.
 */
@Command(name = "node", mixinStandardHelpOptions = true,
        description = "Runs one cluster of a configuration (its controller and its brokers) as a long-running process "
                + "on the addresses the configuration names, replicating with the other clusters' nodes. Logs its "
                + "addresses; serves status, metrics and admin on its admin port; stops cleanly on SIGTERM (exit 0).")
final class NodeCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "the YAML configuration")
    Path config;

    @Option(names = "--cluster", required = true, paramLabel = "NAME", description = "which of its clusters to run")
    String cluster;

    @Option(names = "--member", paramLabel = "ID", description = "for a cluster whose controller replicas run as "
            + "processes of their own (clusters[].controllers): which of its members to run, a controller replica's id, "
            + "a broker member's id (clusters[].brokerMembers) or 'brokers' for the one brokers process of a cluster "
            + "that names none (default: the whole cluster in this process)")
    @Nullable String member;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "where the node keeps its state across restarts "
            + "(default: the cluster's dataDir in the configuration; none: nothing is kept)")
    @Nullable Path dataDir;

    @Option(names = "--drain-timeout", defaultValue = "10s", paramLabel = "TIME",
            description = "on SIGTERM, how long to wait for replication to drain before stopping (default ${DEFAULT-VALUE})")
    String drainTimeout;

    @Override
    public Integer call() throws InterruptedException {
        // A long-running node says what it does (the demo's default is warnings only); -D... overrides.
        if (System.getProperty("org.slf4j.simpleLogger.log.io.verbatim") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.io.verbatim", "info");
        }
        PrintWriter err = spec.commandLine().getErr();
        Duration drain;
        VerbatimConfig loaded;
        try {
            drain = Durations.parse("--drain-timeout", drainTimeout);
            loaded = VerbatimConfig.load(config);
        } catch (ConfigException e) {
            err.println("verbatim node: configuration " + config + ": " + e.getMessage());
            return Verbatim.BAD_INPUT;
        }
        if (loaded.clusters().stream().noneMatch(c -> c.name().equals(cluster))) {
            err.println("verbatim node: --cluster " + cluster + " is not a cluster of " + config + " (it has "
                    + loaded.clusters().stream().map(c -> c.name()).toList() + ")");
            return Verbatim.BAD_INPUT;
        }
        Optional<Path> dir = Optional.ofNullable(dataDir).or(() -> loaded.cluster(cluster).dataDir());
        CountDownLatch stop = new CountDownLatch(1);
        Node node;
        try {
            node = Node.start(loaded, cluster, Optional.ofNullable(member), dir);
        } catch (IllegalArgumentException | IllegalStateException | ConfigException e) {
            err.println("verbatim node: " + e.getMessage());
            return Verbatim.BAD_INPUT;
        }
        onSignal("TERM", stop);
        onSignal("INT", stop);
        spec.commandLine().getOut().println(node.describe());
        spec.commandLine().getOut().println(cluster + (member == null ? "" : "/" + member) + ": ready (admin "
                + node.adminUrl() + ")");
        spec.commandLine().getOut().flush();
        stop.await();
        node.stop(drain);
        spec.commandLine().getOut().println(cluster + (member == null ? "" : "/" + member) + ": stopped cleanly");
        spec.commandLine().getOut().flush();
        return 0;
    }

    /** A signal asks the node to stop cleanly, instead of the JVM's default exit 143. */
    @SuppressWarnings("restriction")
    private static void onSignal(String name, CountDownLatch stop) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> stop.countDown());
        } catch (IllegalArgumentException e) {
            // no such signal on this platform: the JVM's default handling stays
        }
    }
}
