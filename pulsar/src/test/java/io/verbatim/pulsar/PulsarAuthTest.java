package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.Layout;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * A broker of its own with JWT token authentication (Pulsar's {@code AuthenticationProviderToken}, an HS256 secret)
 * and authorization on: the right token works end to end over both clients; a wrong token, no token or a role
 * without access fail at the first call, fast, with an error naming the URL and the refusal.
 */
class PulsarAuthTest {
    private static final String ADMIN_ROLE = "verbatim-admin";
    private static final Duration FAST = Duration.ofSeconds(20); // far below a hang, above a slow first connection
    private static final TestTokens TOKENS = new TestTokens();
    private static PulsarProcess broker;

    @BeforeAll
    static void start() {
        Path data = Path.of("target", "pulsar-auth-" + ProcessHandle.current().pid()).toAbsolutePath();
        broker = PulsarProcess.start(withTokenAuth(PulsarProcess.Options.of(data), TOKENS, ADMIN_ROLE));
        System.out.printf("[pulsar] token-auth broker started in %d ms%n", broker.startMillis());
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    /** What a broker needs for token authentication and authorization, its own internal client as {@code role}. */
    static PulsarProcess.Options withTokenAuth(PulsarProcess.Options options, TestTokens tokens, String role) {
        return options
                .withConf("authenticationEnabled", "true")
                .withConf("authenticationProviders",
                        "org.apache.pulsar.broker.authentication.AuthenticationProviderToken")
                .withConf("tokenSecretKey", tokens.secretKeySetting())
                .withConf("authorizationEnabled", "true")
                .withConf("superUserRoles", role)
                .withConf("brokerClientAuthenticationPlugin", "org.apache.pulsar.client.impl.auth.AuthenticationToken")
                .withConf("brokerClientAuthenticationParameters", "token:" + tokens.token(role));
    }

    private static PulsarStorage.Settings settings(String namespace, Optional<String> token) {
        return new PulsarStorage.Settings(broker.serviceUrl(), broker.webUrl(), namespace, token, Optional.empty(),
                100, Duration.ofSeconds(10));
    }

    @Test
    void theRightTokenPreparesCreatesWritesAndReads() {
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/auth-ok",
                Optional.of(TOKENS.token(ADMIN_ROLE))))) {
            OneEntry.replicateAndReadBack(storage, "auth");
            assertThat(storage.deduplicated().block(FAST)).isTrue();
        }
    }

    @Test
    void aTokenSignedWithAnotherSecretIsRefusedNamingTheUrl() {
        String forged = new TestTokens().token(ADMIN_ROLE);
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/auth-forged", Optional.of(forged)))) {
            assertThatThrownBy(() -> storage.prepareNamespace().block(FAST))
                    .isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(broker.webUrl())
                    .hasMessageContaining("refused the credentials (the token presented; HTTP 401)")
                    .satisfies(e -> System.out.println("[pulsar] a forged token: " + e.getMessage()));
        }
    }

    @Test
    void noTokenIsRefusedNamingTheUrl() {
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/auth-none", Optional.empty()))) {
            assertThatThrownBy(() -> storage.prepareNamespace().block(FAST))
                    .isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(broker.webUrl())
                    .hasMessageContaining("refused the credentials (no token was presented; HTTP 401)")
                    .satisfies(e -> System.out.println("[pulsar] no token: " + e.getMessage()));
        }
    }

    @Test
    void aValidTokenOfARoleWithoutAccessIsRefusedAsNotAuthorized() {
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/auth-nobody",
                Optional.of(TOKENS.token("nobody"))))) {
            assertThatThrownBy(() -> storage.prepareNamespace().block(FAST))
                    .isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(broker.webUrl())
                    .hasMessageContaining("refused access: the credentials are not authorized for it (the token"
                            + " presented; HTTP 401)")
                    .satisfies(e -> System.out.println("[pulsar] a role without access: " + e.getMessage()));
        }
    }

    @Test
    void openingSegmentsWithAForgedTokenFailsAtOnceWithoutRetrying() {
        AtomicLong retries = new AtomicLong();
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/default",
                Optional.of(new TestTokens().token(ADMIN_ROLE))))) {
            assertThatThrownBy(() -> PulsarSegments.open(storage, "persistent://public/default/auth-open",
                    List.of("west"), Layout.initial(1, 1, 0), Schedulers.parallel(), Duration.ofMillis(100),
                    PulsarSegments.OPEN_BACKOFF, (attempt, e) -> retries.incrementAndGet()).block(FAST))
                    .isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(broker.webUrl())
                    .hasMessageContaining("refused the credentials");
        }
        assertThat(retries).hasValue(0);
    }
}
