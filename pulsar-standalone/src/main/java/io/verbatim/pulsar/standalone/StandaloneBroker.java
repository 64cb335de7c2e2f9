package io.verbatim.pulsar.standalone;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogManager;

/**
 * The broker's process: {@code java -cp <classpath> io.verbatim.pulsar.standalone.StandaloneBroker --data DIR
 * [--bind 127.0.0.1] [--broker-port N] [--web-port N] [--cluster standalone] [--conf key=value]...} (see {@link
 * BrokerArgs}).
 *
 * <p>When the broker is ready it prints one line to stdout, {@value #READY_PREFIX} {@code serviceUrl=pulsar://HOST:PORT
 * webUrl=http://HOST:PORT}, followed by {@code serviceUrlTls=pulsar+ssl://HOST:PORT} and {@code
 * webUrlTls=https://HOST:PORT} when those ports are on, the line a launcher waits for. It stops cleanly on SIGTERM (a shutdown hook closes the
 * broker, then the bookie), and also when its stdin reaches end of file, so a parent that dies, even killed, never
 * leaves the broker behind. Exit codes: 0 stopped, 1 failed to start, 2 a bad argument (the message names it).
 */
public final class StandaloneBroker {
    public static final String READY_PREFIX = "VERBATIM-PULSAR-READY";
    private static final String LOG4J2_CONFIG = "log4j2.configurationFile";

    private StandaloneBroker() {
    }

    public static void main(String[] args) throws Exception {
        // before any logger exists: bookkeeper-server's jar has a log4j2.xml (INFO on stdout) that would win
        if (System.getProperty(LOG4J2_CONFIG) == null) {
            System.setProperty(LOG4J2_CONFIG, "classpath:verbatim-broker-log4j2.xml");
        }
        BrokerArgs parsed;
        try {
            parsed = BrokerArgs.parse(args);
            BrokerConfig.validate(parsed);
        } catch (IllegalArgumentException e) {
            System.err.println("[verbatim] bad argument: " + e.getMessage());
            System.exit(2);
            return;
        }
        quietJavaUtilLogging();
        long t0 = System.nanoTime();
        LocalBroker broker;
        try {
            broker = LocalBroker.start(parsed);
        } catch (Exception e) {
            System.err.println("[verbatim] the broker failed to start on " + parsed.dataDir() + ": " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(broker), "verbatim-broker-shutdown"));
        System.err.printf("[verbatim] broker ready in %d ms on %s%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), parsed.dataDir());
        System.out.println(READY_PREFIX + " serviceUrl=" + broker.serviceUrl() + " webUrl=" + broker.webUrl()
                + broker.serviceUrlTls().map(url -> " serviceUrlTls=" + url).orElse("")
                + broker.webUrlTls().map(url -> " webUrlTls=" + url).orElse(""));
        System.out.flush();
        awaitEndOfStdin(System.in);
        System.err.println("[verbatim] stdin closed: stopping");
        System.exit(0); // runs the shutdown hook
    }

    private static void stop(LocalBroker broker) {
        long t0 = System.nanoTime();
        try {
            broker.close();
            System.err.printf("[verbatim] broker stopped in %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        } catch (Exception e) {
            System.err.println("[verbatim] stopping the broker: " + e);
        }
    }

    /** Blocks until {@code in} ends (or fails): the parent closed its end of the pipe, or died. */
    private static void awaitEndOfStdin(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // whatever the parent writes is ignored; only the end matters
            }
        } catch (IOException e) {
            System.err.println("[verbatim] reading stdin: " + e);
        }
    }

    /** Jersey and OpenTelemetry log through java.util.logging: severe only, like log4j2.xml's WARN for the rest. */
    private static void quietJavaUtilLogging() {
        try (InputStream props = StandaloneBroker.class.getResourceAsStream("/verbatim-broker-logging.properties")) {
            if (props != null) {
                LogManager.getLogManager().readConfiguration(props);
            }
        } catch (IOException e) {
            System.err.println("[verbatim] java.util.logging configuration: " + e);
        }
    }
}
