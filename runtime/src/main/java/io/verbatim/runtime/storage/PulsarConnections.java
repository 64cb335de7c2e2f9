package io.verbatim.runtime.storage;

import io.verbatim.config.PulsarConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Backoff;
import io.verbatim.pulsar.PulsarStorage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One cluster's clients of Apache Pulsar ({@code storage.type: pulsar}): its own Pulsar, where its segments
 * live, and each peer's, into which its replicators write (as Pulsar's own replicator writes into the remote
 * cluster's brokers). Connections are made on first use.
 */
public final class PulsarConnections implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(PulsarConnections.class);
    /** Messages a consumer may hold ahead of demand. */
    static final int RECEIVER_QUEUE = 100;
    static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(30);

    private final VerbatimConfig config;
    private final String self;
    private final Map<String, PulsarStorage> open = new LinkedHashMap<>();
    private reactor.core.publisher.@Nullable Mono<Void> prepared;

    public PulsarConnections(VerbatimConfig config, String self) {
        if (!config.storage().onPulsar()) {
            throw new IllegalArgumentException("storage.type is memory: cluster " + self + " has no Pulsar");
        }
        this.config = config;
        this.self = self;
    }

    /** This cluster's own Pulsar. */
    public PulsarStorage own() {
        return of(self);
    }

    /**
     * This cluster's namespace made ready (created if missing, deduplication on), once for every topic: retried with
     * {@code backoff} while it can be fixed by retrying.
     */
    public synchronized reactor.core.publisher.Mono<Void> prepared(Backoff backoff,
            Scheduler timer) {
        if (prepared == null) {
            PulsarStorage own = own();
            prepared = own.prepareNamespace().retryWhen(PulsarTopicStorage.retry("prepare namespace "
                    + own.settings().namespace() + " on " + own.settings().adminUrl(), self, backoff, timer)).cache();
        }
        return prepared;
    }

    /** Cluster {@code cluster}'s Pulsar, as configured. */
    public synchronized PulsarStorage of(String cluster) {
        PulsarStorage storage = open.get(cluster);
        if (storage == null) {
            storage = PulsarStorage.connect(settings(config.storage().pulsar(cluster).orElseThrow(
                    () -> new IllegalArgumentException("no Pulsar is configured for cluster " + cluster))));
            open.put(cluster, storage);
        }
        return storage;
    }

    static PulsarStorage.Settings settings(PulsarConfig p) {
        return new PulsarStorage.Settings(p.serviceUrl(), p.adminUrl(), p.namespace(), p.token(),
                p.trustCertsFile().map(Path::toString), RECEIVER_QUEUE, OPERATION_TIMEOUT);
    }

    @Override
    public synchronized void close() {
        // side by side: each may wait up to PulsarStorage.CLOSE_WAIT for producers on terminated topics
        List<Thread> closing = new ArrayList<>();
        open.forEach((cluster, storage) -> {
            Thread t = new Thread(() -> {
                try {
                    storage.close();
                } catch (RuntimeException e) {
                    LOG.warn("{}: closing the client of {}'s Pulsar: {}", self, cluster, String.valueOf(e.getMessage()));
                }
            }, "pulsar-close-" + cluster);
            t.setDaemon(true);
            t.start();
            closing.add(t);
        });
        for (Thread t : closing) {
            try {
                t.join(PulsarStorage.CLOSE_WAIT.toMillis() * 2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        open.clear();
    }
}
