package io.verbatim.examples;

import io.verbatim.config.PulsarConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * {@code ./verbatim demo --storage pulsar}: one Pulsar standalone broker in a child process for the run (a
 * bookie, RocksDB metadata, broker deduplication; see the {@code pulsar-standalone} module), every cluster in
 * a namespace of its own on it ({@code public/<cluster>}). Three brokers do not fit beside the demo on a small
 * machine; one broker with a namespace per cluster gives each cluster its own topics, subscriptions and
 * deduplication state all the same. Its data lives in a temporary directory deleted at the end.
 */
final class DemoPulsar implements AutoCloseable {
    private final Path dataDir;
    private final PulsarProcess broker;

    private DemoPulsar(Path dataDir, PulsarProcess broker) {
        this.dataDir = dataDir;
        this.broker = broker;
    }

    /** Starts the broker (10–20 s), saying so on {@code progress}. */
    static DemoPulsar start(PrintWriter progress) {
        Path dir;
        try {
            dir = Files.createTempDirectory("verbatim-demo-pulsar-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the broker's data directory", e);
        }
        progress.printf("starting an Apache Pulsar standalone broker in a child process (data in %s)...%n", dir);
        progress.flush();
        try {
            PulsarProcess broker = PulsarProcess.start(PulsarProcess.Options.of(dir));
            progress.printf("  Pulsar broker ready in %.1f s: %s, admin %s (pid %d, log %s)%n",
                    broker.startMillis() / 1000.0, broker.serviceUrl(), broker.webUrl(), broker.pid(), broker.logFile());
            return new DemoPulsar(dir, broker);
        } catch (RuntimeException e) {
            delete(dir);
            throw e;
        }
    }

    /** {@code config} with its segments on this broker: cluster {@code c} in namespace {@code public/c}. */
    VerbatimConfig configure(VerbatimConfig config) {
        Map<String, PulsarConfig> settings = new LinkedHashMap<>();
        config.clusters().forEach(c -> settings.put(c.name(), new PulsarConfig(broker.serviceUrl(), broker.webUrl(),
                "public/" + c.name(), Optional.empty(), Optional.empty())));
        return config.withStorage(config.storage().onPulsar(settings));
    }

    /** Stops the broker; its data directory goes, unless the run failed (then its log is there to read). */
    void close(boolean failed, PrintWriter progress) {
        try {
            broker.close();
        } finally {
            if (failed) {
                progress.printf("the Pulsar broker's data and log are kept in %s (broker.log)%n", dataDir);
            } else {
                delete(dataDir);
            }
        }
    }

    @Override
    public void close() {
        close(false, new PrintWriter(Writer.nullWriter()));
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: left for the system to clean
        }
    }
}
