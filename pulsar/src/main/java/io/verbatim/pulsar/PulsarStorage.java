package io.verbatim.pulsar;

import io.verbatim.model.HashRange;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.SourceSegmentLog;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongFunction;
import javax.net.ssl.SSLHandshakeException;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminBuilder;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.ClientBuilder;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.impl.MessageImpl;
import org.apache.pulsar.client.impl.ProducerBase;
import org.apache.pulsar.common.policies.data.AutoTopicCreationOverride;
import org.apache.pulsar.common.policies.data.Policies;
import org.apache.pulsar.common.policies.data.SubscriptionStats;
import org.apache.pulsar.common.policies.data.TopicStats;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One cluster's segments on its Pulsar: a client for the data and an admin client for topics,
 * subscriptions and namespace policies. Segment topics are named by {@link SegmentTopics}; each is a
 * {@link SourceSegmentLog} to read from and the target of {@link ProducerSession}s to write to.
 */
public final class PulsarStorage implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(PulsarStorage.class);
    private final Settings settings;
    private final PulsarClient client;
    private final PulsarAdmin admin;
    private volatile Sender sender = Sender.PULSAR;
    private volatile MessageSender messageSender = MessageSender.PULSAR;
    /** Replicator sends a sealed segment refused though it may have stored them. */
    private final SealedTails sealedTails = new SealedTails(this);
    /** Segment topic → this process's last termination of it ({@link #terminated}). */
    private final Map<String, CompletableFuture<Void>> terminations =
            new ConcurrentHashMap<>();
    /** Segment topics produce calls hold from deletion ({@link #hold}). */
    private final Map<String, Hold> holds = new ConcurrentHashMap<>();
    /** Segment topic → what to tell when this process seals it (the reads open on it). */
    private final Map<String, Set<Runnable>> sealWatchers =
            new ConcurrentHashMap<>();
    /** Positions refused and then shadowed by later ones (Pulsar #26113), by topic and producer. */
    private final Set<String> shadowed = ConcurrentHashMap.newKeySet();

    /** How a session hands a message to its producer: the client's own send, or a test's stand-in. */
    @FunctionalInterface
    interface Sender {
        Sender PULSAR = (producer, message) -> ((ProducerBase<byte[]>) producer).sendAsync(message);

        CompletableFuture<MessageId> send(Producer<byte[]> producer, MessageImpl<byte[]> message);
    }

    /** How an application's producer hands a message to Pulsar: the client's own send, or a test's stand-in. */
    @FunctionalInterface
    interface MessageSender {
        MessageSender PULSAR = TypedMessageBuilder::sendAsync;

        CompletableFuture<MessageId> send(TypedMessageBuilder<byte[]> message);
    }

    private PulsarStorage(Settings settings, PulsarClient client, PulsarAdmin admin) {
        this.settings = settings;
        this.client = client;
        this.admin = admin;
    }

    /**
     * How to reach one cluster's Pulsar.
     *
     * @param serviceUrl {@code pulsar://host:port} or {@code pulsar+ssl://host:port}
     * @param adminUrl {@code http://host:port} or {@code https://host:port}
     * @param namespace {@code tenant/ns} the cluster's segment topics live in; empty: each topic's own
     * @param token a JWT sent to the broker, if it needs one
     * @param trustCertsFile the CA (PEM) a TLS broker's certificate is checked against, if not the JDK's
     * @param receiverQueue messages a cursor may hold ahead of demand (flow permits), 1..100,000
     * @param operationTimeout how long a subscribe, acknowledgement, producer creation or admin call may take
     */
    public record Settings(String serviceUrl, String adminUrl, String namespace, Optional<String> token,
            Optional<String> trustCertsFile, int receiverQueue, Duration operationTimeout) {
        public Settings {
            Objects.requireNonNull(serviceUrl, "serviceUrl");
            Objects.requireNonNull(adminUrl, "adminUrl");
            Objects.requireNonNull(namespace, "namespace");
            if (!serviceUrl.startsWith("pulsar://") && !serviceUrl.startsWith("pulsar+ssl://")) {
                throw new IllegalArgumentException("serviceUrl '" + serviceUrl + "' must start pulsar:// or pulsar+ssl://");
            }
            if (!adminUrl.startsWith("http://") && !adminUrl.startsWith("https://")) {
                throw new IllegalArgumentException("adminUrl '" + adminUrl + "' must start http:// or https://");
            }
            if (!namespace.isEmpty() && !namespace.matches("[A-Za-z0-9_.=:-]+/[A-Za-z0-9_.=:-]+")) {
                throw new IllegalArgumentException("namespace '" + namespace + "' must be tenant/namespace");
            }
            if (receiverQueue < 1 || receiverQueue > 100_000) {
                throw new IllegalArgumentException("receiverQueue " + receiverQueue + " is outside 1..100000");
            }
            if (operationTimeout.isNegative() || operationTimeout.isZero()
                    || operationTimeout.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("operationTimeout " + operationTimeout + " is outside (0, 1h]");
            }
        }

        /** A plain, unauthenticated broker: the namespace given, 100 messages ahead, 30 s per operation. */
        public static Settings of(String serviceUrl, String adminUrl, String namespace) {
            return new Settings(serviceUrl, adminUrl, namespace, Optional.empty(), Optional.empty(), 100,
                    Duration.ofSeconds(30));
        }
    }

    /** Builds the clients (connections are made on first use; nothing is asked of the broker yet). */
    public static PulsarStorage connect(Settings settings) {
        try {
            ClientBuilder cb = PulsarClient.builder().serviceUrl(settings.serviceUrl())
                    .operationTimeout((int) settings.operationTimeout().toMillis(), TimeUnit.MILLISECONDS);
            PulsarAdminBuilder ab = PulsarAdmin.builder().serviceHttpUrl(settings.adminUrl())
                    .requestTimeout((int) settings.operationTimeout().toMillis(), TimeUnit.MILLISECONDS);
            if (settings.token().isPresent()) {
                cb.authentication(AuthenticationFactory.token(settings.token().get()));
                ab.authentication(AuthenticationFactory.token(settings.token().get()));
            }
            if (settings.trustCertsFile().isPresent()) {
                cb.tlsTrustCertsFilePath(settings.trustCertsFile().get());
                ab.tlsTrustCertsFilePath(settings.trustCertsFile().get());
            }
            PulsarClient client = cb.build();
            try {
                return new PulsarStorage(settings, client, ab.build());
            } catch (PulsarClientException | RuntimeException e) {
                client.close();
                throw e;
            }
        } catch (PulsarClientException e) {
            throw new PulsarStorageException("cannot set up the clients of " + settings.serviceUrl(), e);
        }
    }

    public Settings settings() {
        return settings;
    }

    PulsarClient client() {
        return client;
    }

    PulsarAdmin admin() {
        return admin;
    }

    /**
     * Marks {@code position} of {@code producer} on {@code topic} as shadowed: refused by the broker while a later
     * position was stored, so below the dedup watermark though not stored.
     *
     * @return whether it is newly marked
     */
    boolean shadow(String topic, String producer, SourcePosition position) {
        return shadowed.add(topic + "|" + producer + "|" + position);
    }

    boolean isShadowed(String topic, String producer, SourcePosition position) {
        return shadowed.contains(topic + "|" + producer + "|" + position);
    }

    Sender sender() {
        return sender;
    }

    /** For tests: how every session from now on hands its messages to Pulsar. */
    void sender(Sender value) {
        sender = value;
    }

    SealedTails sealedTails() {
        return sealedTails;
    }

    MessageSender messageSender() {
        return messageSender;
    }

    /** For tests: how every application producer from now on hands its messages to Pulsar. */
    void messageSender(MessageSender value) {
        messageSender = value;
    }

    /**
     * The broker's count of entries after {@code subscription}'s mark-delete position on {@code segmentTopic}; 0
     * without that subscription. Asks the broker and waits for the answer (up to the operation timeout): not for
     * an event loop.
     */
    long backlog(String segmentTopic, String subscription) {
        try {
            TopicStats stats = admin.topics().getStatsAsync(segmentTopic)
                    .get(settings.operationTimeout().toMillis(), TimeUnit.MILLISECONDS);
            SubscriptionStats sub = stats.getSubscriptions().get(subscription);
            return sub == null ? 0 : sub.getMsgBacklog();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PulsarStorageException("interrupted asking the backlog of " + subscription + " on "
                    + segmentTopic, e);
        } catch (Exception e) {
            throw new PulsarStorageException("cannot read the backlog of " + subscription + " on " + segmentTopic,
                    cause(e));
        }
    }

    /** What failed, out of the wrapper a {@code CompletableFuture} put around it. */
    static Throwable cause(Throwable e) {
        return (e instanceof CompletionException || e instanceof ExecutionException)
                && e.getCause() != null ? e.getCause() : e;
    }

    /** The admin API's "already exists". */
    static boolean isConflict(Throwable e) {
        return cause(e) instanceof PulsarAdminException.ConflictException;
    }

    static boolean isNotFound(Throwable e) {
        return cause(e) instanceof PulsarAdminException.NotFoundException;
    }

    /** Whether {@code e}, or what caused it, says a topic does not exist (the admin API's or the client's answer). */
    static boolean isGone(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof PulsarAdminException.NotFoundException
                    || t instanceof PulsarClientException.TopicDoesNotExistException) {
                return true;
            }
        }
        return false;
    }

    /**
     * What a call asking {@code what} of the broker at {@code url} reports when it fails with {@code e}: an error
     * naming the URL that, when the broker refused the credentials (HTTP 401, the binary protocol's authentication
     * error) or their role's access (HTTP 403, an authorization error), says so. An error already mapped is kept.
     */
    PulsarStorageException failure(String what, String url, Throwable e) {
        Throwable c = cause(e);
        if (c instanceof PulsarStorageException mapped) {
            return mapped;
        }
        String refusal = refusal(c);
        if (refusal == null && untrustedCertificate(c)) {
            refusal = "failed TLS: its certificate is not trusted by "
                    + settings.trustCertsFile().map(f -> "the trust file " + f).orElse("the JDK's CAs (no trust file)");
        }
        return new PulsarStorageException(refusal == null ? "cannot " + what + " on " + url
                : "cannot " + what + ": " + url + " " + refusal, c);
    }

    /** Whether {@code e} is, or was caused by, a TLS handshake that refused the peer's certificate. */
    private static boolean untrustedCertificate(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SSLHandshakeException || t instanceof CertificateException
                    || t instanceof CertPathValidatorException) {
                return true;
            }
        }
        return false;
    }

    /** How the broker refused this storage's credentials in {@code e}, or null if it did not. */
    private @Nullable String refusal(Throwable e) {
        String presented = settings.token().isPresent() ? "the token presented" : "no token was presented";
        int status = e instanceof PulsarAdminException a ? a.getStatusCode() : -1;
        // Pulsar answers a role without access 401 too, "Unauthorized to <operation> ... clientAppId [role]"
        boolean denied = status == 403 || e instanceof PulsarClientException.AuthorizationException
                || status == 401 && String.valueOf(e.getMessage()).contains("Unauthorized to");
        String http = status > 0 ? "; HTTP " + status + ")" : ")";
        if (denied) {
            return "refused access: the credentials are not authorized for it (" + presented + http;
        }
        if (status == 401 || e instanceof PulsarClientException.AuthenticationException) {
            return "refused the credentials (" + presented + http;
        }
        return null;
    }

    /**
     * Whether trying again may help after {@code e}: not when the broker refused the credentials or their access,
     * answered another 4xx than a conflict (a 408 or 429 may pass), refused the URL or the TLS certificate, or the
     * client refused the call.
     */
    public static boolean isRetriable(Throwable e) {
        Throwable c = cause(e);
        while (c instanceof PulsarStorageException && c.getCause() != null && c.getCause() != c) {
            c = cause(c.getCause());
        }
        if (untrustedCertificate(c)) {
            return false; // a certificate that is not trusted stays so
        }
        if (c instanceof PulsarAdminException a) {
            int status = a.getStatusCode();
            return status < 400 || status >= 500 || status == 409 || status == 408 || status == 429;
        }
        if (c instanceof PulsarClientException p) {
            return !(p instanceof PulsarClientException.AuthenticationException)
                    && PulsarClientException.isRetriableError(p);
        }
        return !(c instanceof IllegalArgumentException || c instanceof IllegalStateException
                || c instanceof UnsupportedOperationException);
    }

    /** The segment topic of {@code segment} of the scalable topic {@code topic} on this cluster. */
    public String segmentTopic(String topic, Segment segment) {
        return SegmentTopics.of(topic, segment, settings.namespace());
    }

    /**
     * Makes sure the cluster's namespace exists with broker deduplication on (what a destination needs for
     * the broker itself to drop repeated entries) and automatic topic creation off (segment topics are made and
     * deleted with their layouts).
     */
    public Mono<Void> prepareNamespace() {
        String ns = settings.namespace();
        if (ns.isEmpty()) {
            return Mono.error(new IllegalStateException("no namespace is configured to prepare"));
        }
        return Mono.fromFuture(() -> admin.namespaces().createNamespaceAsync(ns))
                .onErrorResume(PulsarStorage::isConflict, e -> Mono.empty())
                .then(Mono.fromFuture(() -> admin.namespaces().setDeduplicationStatusAsync(ns, true)))
                // Segment topics are made by their layouts, and deleted by garbage collection: a producer or consumer
                // that comes late to a deleted one must be refused ("topic does not exist", retried until it learns the
                // layout), not give it an empty topic again outside every layout.
                .then(Mono.fromFuture(() -> admin.namespaces().setAutoTopicCreationAsync(ns,
                        AutoTopicCreationOverride.builder()
                                .allowAutoTopicCreation(false).build())))
                .onErrorMap(e -> failure("prepare namespace " + ns, settings.adminUrl(), e));
    }

    /** True when broker deduplication is on for the namespace. */
    public Mono<Boolean> deduplicated() {
        return Mono.fromFuture(() -> admin.namespaces().getPoliciesAsync(settings.namespace()))
                .map((Policies p) -> Boolean.TRUE.equals(p.deduplicationEnabled));
    }

    /** Creates the segment's topic if it does not exist (what a layout's new segment needs). */
    public Mono<Void> createSegment(String topic, Segment segment) {
        String name = segmentTopic(topic, segment);
        return Mono.fromFuture(() -> admin.topics().createNonPartitionedTopicAsync(name))
                .onErrorResume(PulsarStorage::isConflict, e -> Mono.empty())
                .onErrorMap(e -> failure("create segment topic " + name, settings.adminUrl(), e));
    }

    /** Seals the segment: its topic is terminated, and readers complete after its last entry. */
    public Mono<Void> seal(String topic, Segment segment) {
        String name = segmentTopic(topic, segment);
        // Then unloaded: a write still in flight when the ledger terminates fails, and Pulsar 4.0 fences the topic
        // for it; the failed write's pending count may never return to zero, so the topic stays fenced (every
        // subscribe and producer refused, "temporarily unavailable") and the segment's last entries are never read.
        // A reload clears the fence and keeps the termination.
        return Mono.defer(() -> {
                    // known before the broker hears of it: a reader told the topic ended waits for the termination
                    CompletableFuture<Void> terminated = new CompletableFuture<>();
                    terminations.put(name, terminated);
                    return Mono.fromFuture(() -> admin.topics().terminateTopicAsync(name))
                            .doFinally(s -> {
                                terminated.complete(null);
                                sealWatchers.getOrDefault(name, Set.of()).forEach(Runnable::run);
                            });
                }).then()
                .then(Mono.defer(() -> Mono.fromFuture(() -> admin.topics().unloadAsync(name))))
                // gone already (garbage collection on a node ahead of this one deleted it): nothing can write to it,
                // as the broker makes no topic on demand in this namespace
                .onErrorResume(PulsarStorage::isNotFound, e -> Mono.empty())
                .onErrorMap(e -> failure("terminate segment topic " + name, settings.adminUrl(), e));
    }

    /**
     * Deletes the segment's topic and its subscriptions (what garbage collection does once a layout no longer
     * holds the segment); nothing to do when it does not exist. Forced: a consumer or producer still attached is
     * cut off, not a reason to keep the topic.
     */
    public Mono<Void> deleteSegment(String topic, Segment segment) {
        String name = segmentTopic(topic, segment);
        terminations.remove(name);
        return released(name).then(Mono.fromFuture(() -> admin.topics().deleteAsync(name, true)))
                .onErrorResume(PulsarStorage::isNotFound, e -> Mono.empty())
                .onErrorMap(e -> failure("delete segment topic " + name, settings.adminUrl(), e));
    }

    /**
     * Keeps {@code segmentTopic} from being deleted here until the returned release runs (once; later runs do
     * nothing): a produce call holds it while it may still read what the topic stored of its refused sends, which a
     * deleted topic could no longer tell (a message lost, or stored twice).
     */
    Runnable hold(String segmentTopic) {
        holds.compute(segmentTopic, (k, h) -> {
            Hold held = h == null ? new Hold() : h;
            held.count++;
            return held;
        });
        AtomicBoolean once = new AtomicBoolean();
        return () -> {
            if (once.compareAndSet(false, true)) {
                holds.computeIfPresent(segmentTopic, (k, h) -> {
                    if (--h.count > 0) {
                        return h;
                    }
                    h.released.complete(null);
                    return null;
                });
            }
        };
    }

    /**
     * Done once no produce call holds {@code segmentTopic} ({@link #hold}), or after twice the operation timeout (a
     * call is bounded by it: waiting longer would stall the topic's layouts), said in a warning.
     */
    private Mono<Void> released(String segmentTopic) {
        Hold held = holds.get(segmentTopic);
        if (held == null) {
            return Mono.empty();
        }
        Duration most = settings.operationTimeout().multipliedBy(2);
        return Mono.fromFuture(held.released).timeout(most, Mono.fromRunnable(() -> LOG.warn("deleting {} though a "
                + "produce call still reads what it stored after {} s", segmentTopic, most.toSeconds())));
    }

    /** How many produce calls hold a segment topic, and when the last let it go. */
    private static final class Hold {
        private int count;
        private final CompletableFuture<Void> released = new CompletableFuture<>();
    }

    /**
     * Done once this process's last termination of {@code segmentTopic} (a seal) is over, failed or not; done at
     * once if it started none. Until then the broker may still store a write that was at the bookies as the topic
     * was terminated, so what it says of the topic's end is not final before.
     */
    CompletableFuture<Void> terminated(String segmentTopic) {
        return terminations.getOrDefault(segmentTopic, CompletableFuture.completedFuture(null));
    }

    /**
     * Tells {@code onSeal} when this process seals {@code segmentTopic}, until the returned handle is run: a read
     * cannot count on the broker to say a sealed topic ended (it says it only while the subscription has nothing
     * unacknowledged, when it happens to read).
     */
    Runnable watchSeal(String segmentTopic, Runnable onSeal) {
        sealWatchers.computeIfAbsent(segmentTopic, k -> ConcurrentHashMap.newKeySet()).add(onSeal);
        return () -> sealWatchers.computeIfPresent(segmentTopic, (k, set) -> {
            set.remove(onSeal);
            return set.isEmpty() ? null : set;
        });
    }

    /** Whether this process sealed {@code segmentTopic} (since it started). */
    boolean sealedHere(String segmentTopic) {
        return terminations.containsKey(segmentTopic);
    }

    /** The segment's log, as a replicator reads it; its state as {@code segment} has it (sealed or not). */
    public SourceSegmentLog log(String topic, Segment segment) {
        return new PulsarSegmentLog(this, segment.id(), segmentTopic(topic, segment), segment.isSealed());
    }

    /**
     * Producers being closed, by topic and producer name: a session's producer is closed off Pulsar's I/O threads,
     * and the next session of the same name waits for that close before it creates its own, or the broker would
     * refuse it (ProducerBusy) and cost the replicator a backoff.
     */
    private final Map<String, CompletableFuture<Void>> closing =
            new ConcurrentHashMap<>();

    /** Notes that {@code name}'s producer on {@code topic} is closing, until {@code closed} completes. */
    void closing(String topic, String name, CompletableFuture<Void> closed) {
        String key = topic + '\n' + name;
        closing.put(key, closed);
        closed.whenComplete((v, e) -> closing.remove(key, closed));
    }

    /**
     * Completes once no producer named {@code name} on {@code topic} is being closed or made for a broken session:
     * at most {@link #PRODUCER_GONE_WAIT} (or the operation timeout, if shorter), well inside a send's timeout,
     * which the first send's wait counts against.
     */
    CompletableFuture<Void> closed(String topic, String name) {
        CompletableFuture<Void> pending = closing.get(topic + '\n' + name);
        long waitMs = Math.min(PRODUCER_GONE_WAIT.toMillis(), settings.operationTimeout().toMillis());
        return pending == null ? CompletableFuture.completedFuture(null)
                : pending.exceptionally(e -> null).completeOnTimeout(null, waitMs,
                        TimeUnit.MILLISECONDS);
    }

    /** The longest a new session waits for the last producer of its name to go. */
    static final Duration PRODUCER_GONE_WAIT = Duration.ofSeconds(5);

    /** An ordered send session into the segment's topic as {@code producerName}, its sealed ancestors unknown. */
    public ProducerSession session(String topic, Segment segment, String producerName) {
        return session(topic, segment, producerName, segment.range(), id -> Optional.empty());
    }

    /**
     * An ordered send session into the segment's topic as {@code producerName}, the replicator of a source segment
     * whose range is {@code source}. Before its first send it reads what the segment's sealed ancestors (found in
     * {@code segments}, the destination's segments by id) stored of that producer: an entry stored there is answered
     * as a duplicate and not sent again ({@link SealedLineage}).
     */
    public ProducerSession session(String topic, Segment segment, String producerName, HashRange source,
            LongFunction<Optional<Segment>> segments) {
        return new PulsarProducerSession(this, segmentTopic(topic, segment),
                new PulsarProducerSession.Ancestry(topic, segment, source, segments), producerName);
    }

    /**
     * Closes the clients, waiting at most {@link #CLOSE_WAIT} for producers and consumers to close: one on a
     * terminated or unreachable topic may take the operation timeout, and what is still closing then finishes
     * in the background.
     */
    @Override
    public void close() {
        admin.close();
        try {
            client.closeAsync().get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            // still closing: the client's threads finish it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new PulsarStorageException("cannot close the client of " + settings.serviceUrl(), cause(e));
        }
    }

    /** The longest {@link #close} waits. */
    public static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
}
