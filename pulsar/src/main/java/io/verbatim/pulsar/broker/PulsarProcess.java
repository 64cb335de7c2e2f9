package io.verbatim.pulsar.broker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Pulsar 4.0.7 standalone broker (one bookie, RocksDB metadata) in a child JVM: pulsar-standalone's {@code
 * StandaloneBroker} on its own classpath, run by this JVM's {@code java}.
 *
 * <p>{@link #start} returns once the child printed its READY line (the broker answers lookups and its admin API
 * lists {@code public/default}). The child's stdout and stderr go to {@link #logFile()} in the data directory. Its
 * stdin stays an open pipe from this JVM: when this JVM dies, even killed, the pipe closes and the broker stops, so
 * no broker outlives its parent.
 *
 * <p>Restarts: the data directory is kept, and {@link #options()} carries the ports this start used (chosen free
 * when given as 0), so {@link #restart()} (or {@code start(process.options())}) brings the same broker back on the
 * same data, topics, subscriptions and URLs.
 */
public final class PulsarProcess implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PulsarProcess.class);
    private static final String MAIN_CLASS = "io.verbatim.pulsar.standalone.StandaloneBroker";
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);
    private static final int TAIL_LINES = 20;
    /**
     * What the broker needs beyond a heap: Netty and BookKeeper reach into the JDK (as in pulsar-standalone's
     * surefire argLine). C1 only: a test or demo broker starts faster (~12 s rather than 12–19 s on 2 busy cores)
     * and peaks ~25 MB lower, for throughput it does not need.
     */
    private static final List<String> JVM_FLAGS = List.of(
            "-XX:MaxDirectMemorySize=192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Dio.netty.tryReflectionSetAccessible=true",
            "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens", "java.base/java.lang=ALL-UNNAMED",
            "--add-opens", "java.base/java.util=ALL-UNNAMED",
            "--add-opens", "java.base/java.io=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.platform=ALL-UNNAMED",
            "--add-opens", "java.management/sun.management=ALL-UNNAMED");

    /**
     * How to start the broker.
     *
     * @param dataDir      metadata and bookie data, kept across restarts; the log file is {@code broker.log} in it
     * @param brokerPort   the binary protocol's port, 0 for a free one
     * @param webPort      the admin API's port, 0 for a free one
     * @param conf         ServiceConfiguration properties by name, e.g. {@code brokerDeduplicationEnabled=true}
     * @param heap         the child's {@code -Xmx}, e.g. {@code 384m}
     * @param classpathFile pulsar-standalone's {@code target/standalone.classpath}; null: the system property
     *                     {@code verbatim.pulsar.classpath}, else the environment variable {@code
     *                     VERBATIM_PULSAR_CLASSPATH}
     */
    public record Options(Path dataDir, String bindAddress, int brokerPort, int webPort, Map<String, String> conf,
                          String heap, Duration startTimeout, @Nullable Path classpathFile) {
        public static final String DEFAULT_HEAP = "384m";
        public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(90);

        public Options {
            dataDir = dataDir.toAbsolutePath().normalize();
            if (bindAddress.isBlank()) {
                throw new IllegalArgumentException("bindAddress: required, got '" + bindAddress + "'");
            }
            checkPort("brokerPort", brokerPort);
            checkPort("webPort", webPort);
            conf = Collections.unmodifiableMap(new LinkedHashMap<>(conf));
            for (String key : conf.keySet()) {
                if (key.isBlank() || key.contains("=")) {
                    throw new IllegalArgumentException("conf: not a property name: '" + key + "'");
                }
            }
            if (!heap.matches("[1-9][0-9]*[kmgKMG]")) {
                throw new IllegalArgumentException("heap: expected a size like 384m, got '" + heap + "'");
            }
            if (startTimeout.isNegative() || startTimeout.isZero()) {
                throw new IllegalArgumentException("startTimeout: must be positive, got " + startTimeout);
            }
        }

        /** On 127.0.0.1, free ports, a 384m heap, 90 s to start, the classpath file from the environment. */
        public static Options of(Path dataDir) {
            return new Options(dataDir, "127.0.0.1", 0, 0, Map.of(), DEFAULT_HEAP, DEFAULT_START_TIMEOUT, null);
        }

        public Options withPorts(int brokerPort, int webPort) {
            return new Options(dataDir, bindAddress, brokerPort, webPort, conf, heap, startTimeout, classpathFile);
        }

        public Options withBindAddress(String bindAddress) {
            return new Options(dataDir, bindAddress, brokerPort, webPort, conf, heap, startTimeout, classpathFile);
        }

        public Options withConf(String key, String value) {
            Map<String, String> more = new LinkedHashMap<>(conf);
            more.put(key, value);
            return new Options(dataDir, bindAddress, brokerPort, webPort, more, heap, startTimeout, classpathFile);
        }

        public Options withHeap(String heap) {
            return new Options(dataDir, bindAddress, brokerPort, webPort, conf, heap, startTimeout, classpathFile);
        }

        public Options withStartTimeout(Duration startTimeout) {
            return new Options(dataDir, bindAddress, brokerPort, webPort, conf, heap, startTimeout, classpathFile);
        }

        public Options withClasspathFile(Path classpathFile) {
            return new Options(dataDir, bindAddress, brokerPort, webPort, conf, heap, startTimeout, classpathFile);
        }

        private static void checkPort(String name, int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(name + ": must be 0 (a free port) to 65535, got " + port);
            }
        }
    }

    private final Options options;
    private final Process process;
    private final Thread pump;
    private final ReadyLine ready;
    private final Path logFile;
    private final long startMillis;
    private boolean closed;

    private PulsarProcess(Options options, Process process, Thread pump, ReadyLine ready, Path logFile,
                          long startMillis) {
        this.options = options;
        this.process = process;
        this.pump = pump;
        this.ready = ready;
        this.logFile = logFile;
        this.startMillis = startMillis;
    }

    /**
     * Starts the broker and waits for its READY line. A missing classpath is an error naming where it was looked
     * for; a child that exits or stays silent past {@link Options#startTimeout()} is killed, and the error names
     * the log file and carries its last lines.
     */
    public static PulsarProcess start(Options options) {
        String classpath = LauncherClasspath.read(LauncherClasspath.locate(options.classpathFile()));
        Path logFile = options.dataDir().resolve("broker.log");
        try {
            Files.createDirectories(options.dataDir());
            Files.writeString(logFile, "---- " + Instant.now() + " starting the broker\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("preparing the broker's data directory " + options.dataDir(), e);
        }
        log.info("starting a Pulsar broker on {} (log {})", options.dataDir(), logFile);
        long t0 = System.nanoTime();
        Process process;
        try {
            process = new ProcessBuilder(command(options, classpath)).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("starting the broker's JVM (" + javaCommand() + ")", e);
        }
        OutputPump output = new OutputPump(process.getInputStream(), logFile);
        Thread pump = new Thread(output, "pulsar-broker-output-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        ReadyLine ready = awaitReady(options, process, pump, output, logFile);
        long startMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        Options resolved = options.withPorts(ready.serviceUrl().getPort(), ready.webUrl().getPort());
        URI serviceTls = ready.serviceUrlTls();
        URI webTls = ready.webUrlTls();
        if (serviceTls != null) { // a restart binds the same TLS ports, not free ones again
            resolved = resolved.withConf("brokerServicePortTls", Integer.toString(serviceTls.getPort()));
        }
        if (webTls != null) {
            resolved = resolved.withConf("webServicePortTls", Integer.toString(webTls.getPort()));
        }
        log.info("Pulsar broker ready in {} ms: {} {}{} (pid {})", startMillis, ready.serviceUrl(), ready.webUrl(),
                serviceTls == null ? "" : " " + serviceTls + " " + webTls,
                process.pid());
        return new PulsarProcess(resolved, process, pump, ready, logFile, startMillis);
    }

    /**
     * Stops this broker if it still runs, then starts it again with {@link #options()}: the same data directory
     * and ports.
     */
    public PulsarProcess restart() {
        close();
        return start(options);
    }

    /** {@code pulsar://host:port}. */
    public String serviceUrl() {
        return ready.serviceUrl().toString();
    }

    /** {@code http://host:port}. */
    public String webUrl() {
        return ready.webUrl().toString();
    }

    /**
     * {@code pulsar+ssl://host:port}, when the broker was started with {@code brokerServicePortTls} (0: a free
     * port, resolved here and in {@link #options()}).
     */
    public Optional<String> serviceUrlTls() {
        return Optional.ofNullable(ready.serviceUrlTls()).map(URI::toString);
    }

    /** {@code https://host:port}, when the broker was started with {@code webServicePortTls}. */
    public Optional<String> webUrlTls() {
        return Optional.ofNullable(ready.webUrlTls()).map(URI::toString);
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The child's stdout and stderr, appended across restarts ({@code broker.log} in the data directory). */
    public Path logFile() {
        return logFile;
    }

    /** From launching the child to its READY line. */
    public long startMillis() {
        return startMillis;
    }

    /** The options this broker was started with, its ports resolved: what {@link #restart()} uses. */
    public Options options() {
        return options;
    }

    /** SIGTERM, up to 15 s for the broker and bookie to close, then SIGKILL; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("the Pulsar broker (pid {}) did not stop within {} s: killing it", pid(),
                        STOP_TIMEOUT.toSeconds());
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        finish();
    }

    /** SIGKILL now, as a crash would: for restart tests. Afterwards {@link #close()} does nothing. */
    public synchronized void kill() {
        closed = true;
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        finish();
    }

    private void finish() {
        try {
            process.getOutputStream().close();
            pump.join(TimeUnit.SECONDS.toMillis(5));
        } catch (IOException e) {
            log.debug("closing the broker's stdin", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ReadyLine awaitReady(Options options, Process process, Thread pump, OutputPump output,
                                        Path logFile) {
        String failure;
        try {
            return output.ready().get(options.startTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            failure = "did not print its ready line within " + options.startTimeout().toSeconds() + " s";
        } catch (ExecutionException e) {
            failure = "exited before it was ready";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "was interrupted while starting";
        }
        process.destroyForcibly();
        try {
            if (process.waitFor(5, TimeUnit.SECONDS)) {
                failure += " (exit code " + process.exitValue() + ")";
            }
            pump.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new IllegalStateException("the Pulsar broker on " + options.dataDir() + " " + failure + "; its log "
                + logFile + " ends with:\n" + OutputPump.tail(logFile, TAIL_LINES));
    }

    private static List<String> command(Options options, String classpath) {
        List<String> command = new ArrayList<>();
        command.add(javaCommand());
        command.add("-Xmx" + options.heap());
        command.addAll(JVM_FLAGS);
        command.add("-cp");
        command.add(classpath);
        command.add(MAIN_CLASS);
        command.add("--data");
        command.add(options.dataDir().toString());
        command.add("--bind");
        command.add(options.bindAddress());
        command.add("--broker-port");
        command.add(Integer.toString(options.brokerPort()));
        command.add("--web-port");
        command.add(Integer.toString(options.webPort()));
        options.conf().forEach((key, value) -> {
            command.add("--conf");
            command.add(key + "=" + value);
        });
        return command;
    }

    /** This JVM's own java, so the broker runs on the same JDK. */
    private static String javaCommand() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }
}
