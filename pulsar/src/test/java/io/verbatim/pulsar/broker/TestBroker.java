package io.verbatim.pulsar.broker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One Pulsar broker process per test JVM, started on first use and stopped by a shutdown hook, for every test class
 * in the module that needs a broker. Its data lives in {@code target/pulsar-test-<test JVM pid>}; tests share it, so
 * each uses topics and namespaces of its own.
 */
public final class TestBroker {
    private static PulsarProcess shared;

    private TestBroker() {
    }

    /** The running broker, started the first time (10–15 s). */
    public static synchronized PulsarProcess shared() {
        if (shared == null) {
            Path data = Path.of("target", "pulsar-test-" + ProcessHandle.current().pid()).toAbsolutePath();
            PulsarProcess started = PulsarProcess.start(PulsarProcess.Options.of(data));
            System.out.printf("[pulsar] shared broker started in %d ms, pid %d, %s %s%n", started.startMillis(),
                    started.pid(), started.serviceUrl(), started.webUrl());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(started), "pulsar-test-broker-stop"));
            shared = started;
        }
        return shared;
    }

    /**
     * Closes the broker and reports its peak RSS, on stdout and, since surefire may have stopped forwarding output
     * by the time shutdown hooks run, also in {@code broker-stats.txt} beside its log.
     */
    private static void stop(PulsarProcess broker) {
        long peakKb = peakRssKb(broker.pid());
        long t0 = System.nanoTime();
        broker.close();
        String line = String.format("[pulsar] shared broker: started in %d ms, stopped in %d ms, peak RSS (VmHWM)"
                + " %d MB%n", broker.startMillis(), (System.nanoTime() - t0) / 1_000_000, peakKb / 1024);
        System.out.print(line);
        try {
            Files.writeString(broker.logFile().resolveSibling("broker-stats.txt"), line);
        } catch (IOException e) {
            System.err.println("[pulsar] writing broker-stats.txt: " + e);
        }
    }

    /** A process's peak resident set in kB (VmHWM in /proc/PID/status), or -1 where there is none. */
    public static long peakRssKb(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
