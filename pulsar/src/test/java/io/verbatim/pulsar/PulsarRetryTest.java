package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Backoff;
import io.verbatim.model.Layout;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLHandshakeException;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * Opening a topic's segments while its broker is down retries with backoff, each attempt reported, until the broker
 * comes up on the URL; what retrying cannot fix is told apart from what it can. (An auth or TLS refusal ending the
 * open at once is in {@link PulsarAuthTest} and {@link PulsarTlsTest}, which have such brokers.)
 */
class PulsarRetryTest {
    private static final Backoff FAST_RETRIES = new Backoff(Duration.ofMillis(50), Duration.ofMillis(500), 0.2);

    @Test
    void openingAgainstADownBrokerRetriesUntilItStartsOnThatUrl() throws Exception {
        // started once and stopped, so public/default exists when it starts again: a broker on fresh data answers
        // its admin API a moment before it made its default namespace, and that 404 is rightly not retried
        Path data = Path.of("target", "pulsar-retry-" + ProcessHandle.current().pid()).toAbsolutePath();
        PulsarProcess.Options options;
        try (PulsarProcess first = PulsarProcess.start(PulsarProcess.Options.of(data)
                .withPorts(freePort(), freePort()))) {
            options = first.options();
        }
        String serviceUrl = "pulsar://127.0.0.1:" + options.brokerPort();
        String adminUrl = "http://127.0.0.1:" + options.webPort();
        AtomicLong attempts = new AtomicLong();
        AtomicReference<Throwable> lastFailure = new AtomicReference<>();
        String topic = "persistent://public/default/retry-" + System.nanoTime();
        PulsarStorage.Settings settings = new PulsarStorage.Settings(serviceUrl, adminUrl, "public/default",
                Optional.empty(), Optional.empty(), 100, Duration.ofSeconds(5));
        try (PulsarStorage storage = PulsarStorage.connect(settings)) {
            CompletableFuture<PulsarSegments> opened = PulsarSegments.open(storage, topic, List.of("west"),
                    Layout.initial(1, 2, 0), Schedulers.parallel(), Duration.ofMillis(100), FAST_RETRIES,
                    (attempt, e) -> {
                        attempts.set(attempt);
                        lastFailure.set(e);
                    }).toFuture();
            awaitAtLeast(attempts, 3, Duration.ofSeconds(60));
            assertThat(opened).isNotDone();
            assertThat(lastFailure.get()).isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(adminUrl);
            System.out.println("[pulsar] retrying against a down broker, attempt " + attempts.get() + ": "
                    + lastFailure.get().getMessage());

            try (PulsarProcess broker = PulsarProcess.start(options)) { // the same data, on the same ports
                assertThat(broker.webUrl()).isEqualTo(adminUrl);
                long before = attempts.get();
                PulsarSegments segments = opened.get(60, TimeUnit.SECONDS);
                System.out.printf("[pulsar] broker up in %d ms; opened after %d failed attempts (%d before it"
                        + " started)%n", broker.startMillis(), attempts.get(), before);
                assertThat(segments.layout().epoch()).isEqualTo(Layout.initial(1, 2, 0).epoch());
                for (var segment : segments.layout().segments().values()) {
                    // each segment's topic and the peer's cursor exist: a backlog of 0 is asked of the broker
                    assertThat(segments.backlog(segment.id(), ReplicatorConfig.cursorName("west"))).isZero();
                    assertThat(storage.admin().topics().getSubscriptions(storage.segmentTopic(topic, segment)))
                            .containsExactly(SegmentTopics.subscription(ReplicatorConfig.cursorName("west")));
                }
            }
        }
    }

    @Test
    void whatRetryingCannotFixIsNotRetried() {
        assertThat(PulsarStorage.isRetriable(admin(401))).as("refused credentials").isFalse();
        assertThat(PulsarStorage.isRetriable(admin(403))).as("refused access").isFalse();
        assertThat(PulsarStorage.isRetriable(admin(404))).as("no such namespace").isFalse();
        assertThat(PulsarStorage.isRetriable(admin(412))).as("a precondition").isFalse();
        assertThat(PulsarStorage.isRetriable(new PulsarClientException.AuthenticationException("bad token")))
                .as("the binary protocol's authentication error").isFalse();
        assertThat(PulsarStorage.isRetriable(new PulsarClientException.AuthorizationException("no access")))
                .as("the binary protocol's authorization error").isFalse();
        assertThat(PulsarStorage.isRetriable(new PulsarStorageException("cannot prepare", new PulsarAdminException(
                "x", new SSLHandshakeException("PKIX path building failed"), "x", 500))))
                .as("an untrusted certificate, even under a 500").isFalse();
        assertThat(PulsarStorage.isRetriable(new IllegalArgumentException("bad name"))).isFalse();
    }

    @Test
    void whatRetryingMayFixIsRetried() {
        assertThat(PulsarStorage.isRetriable(admin(409))).as("a conflict").isTrue();
        assertThat(PulsarStorage.isRetriable(admin(429))).as("too many requests").isTrue();
        assertThat(PulsarStorage.isRetriable(admin(500))).isTrue();
        assertThat(PulsarStorage.isRetriable(admin(503))).isTrue();
        assertThat(PulsarStorage.isRetriable(new PulsarStorageException("cannot create segment topic t on http://h:1",
                new PulsarAdminException(new ConnectException("Connection refused"))))).as("nobody listening").isTrue();
        assertThat(PulsarStorage.isRetriable(new CompletionException(
                new PulsarClientException.TimeoutException("lookup timed out")))).isTrue();
    }

    private static PulsarAdminException admin(int status) {
        return new PulsarAdminException(new RuntimeException("HTTP " + status), "HTTP " + status, status);
    }

    /** Polls (with a deadline, not a sleep the result depends on) until {@code counter} reaches {@code n}. */
    private static void awaitAtLeast(AtomicLong counter, long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (counter.get() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + counter.get() + " failed attempts within " + timeout);
            }
            Thread.sleep(20);
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            return s.getLocalPort();
        }
    }
}
