package io.verbatim.config;

import io.netty.handler.ssl.ClientAuth;
import io.verbatim.net.Tls;
import io.verbatim.net.Token;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/** Reads {@code security} and each cluster's {@code token}, {@code certificateName} and {@code tls}. */
final class Security {
    private Security() {
    }

    /**
     * A cluster's own certificate chain and key ({@code clusters[].tls}), replacing the file's; the files are
     * read only when TLS is enabled.
     */
    record OwnFiles(Section section, String certificateChain, String privateKey) {
    }

    static SecurityConfig.ClusterCredentials credentials(Section s, Function<String, String> env) {
        Token token = token(s, "token", env, true, "the cluster's broker credential: the token itself, env:NAME, "
                + "or sha256:<64 hex> on a node of another cluster").orElseThrow();
        Optional<String> certificateName = s.optionalString("certificateName");
        Optional<Token> controllerSecret = token(s, "controllerSecret", env, false, "the secret the cluster's own "
                + "processes share when its controller replicas run apart: the secret itself or env:NAME");
        return new SecurityConfig.ClusterCredentials(s.key("token"), token, certificateName, controllerSecret);
    }

    static Optional<OwnFiles> ownTls(Section s) {
        if (!s.has("certificateChain") && !s.has("privateKey")) {
            s.done();
            return Optional.empty();
        }
        String chain = s.requiredString("certificateChain", "a PEM file");
        String key = s.requiredString("privateKey", "a PEM file (PKCS#8)");
        s.done();
        return Optional.of(new OwnFiles(s, chain, key));
    }

    static SecurityConfig read(Section s, List<ClusterConfig> clusters, List<SecurityConfig.ClusterCredentials> credentials,
            List<Optional<OwnFiles>> ownTls, Function<String, String> env) {
        if (s.has("brokerToken")) {
            throw new ConfigException(s.key("brokerToken"), "is replaced by per-cluster tokens (expected each cluster's "
                    + "own clusters[].token, and security.adminToken for layout operations)");
        }
        Optional<Token> admin = token(s, "adminToken", env, false, "the admin role's token");
        boolean openStatus = s.bool("openStatus", true);
        Map<String, Tls> tls = tls(s.section("tls"), clusters, ownTls);
        s.done();
        for (int j = 0; j < credentials.size(); j++) {
            for (int i = 0; i < j; i++) {
                if (credentials.get(i).token().sameAs(credentials.get(j).token())) {
                    throw new ConfigException(credentials.get(j).key(), "is the same token as "
                            + credentials.get(i).key() + " (expected a token of its own per cluster)");
                }
            }
            for (int i = 0; i < credentials.size(); i++) {
                Optional<Token> secret = credentials.get(j).controllerSecret();
                if (secret.isPresent() && (secret.get().sameAs(credentials.get(i).token())
                        || admin.isPresent() && admin.get().sameAs(secret.get()))) {
                    throw new ConfigException(credentials.get(j).controllerSecretKey(), "is the same as a token "
                            + "(expected a secret of its own: a token is presented to peers)");
                }
            }
            if (admin.isPresent() && admin.get().sameAs(credentials.get(j).token())) {
                throw new ConfigException(s.key("adminToken"), "is the same token as " + credentials.get(j).key()
                        + " (expected the admin's own token)");
            }
        }
        Map<String, SecurityConfig.ClusterCredentials> byCluster = new LinkedHashMap<>();
        for (int i = 0; i < clusters.size(); i++) {
            byCluster.put(clusters.get(i).name(), credentials.get(i));
        }
        return new SecurityConfig(byCluster, admin, openStatus, tls);
    }

    private static Map<String, Tls> tls(Section s, List<ClusterConfig> clusters, List<Optional<OwnFiles>> ownTls) {
        boolean enabled = s.bool("enabled", false);
        // Every value is checked whether or not TLS is on: a typo found only the day TLS is switched on would
        // stop every node then. With TLS off the files are not read.
        ClientAuth auth = clientAuth(s);
        Map<String, Tls> out = new LinkedHashMap<>();
        if (!enabled) {
            for (String k : List.of("certificateChain", "privateKey", "trustedCertificates")) {
                s.optionalString(k);
            }
            s.done();
            return out;
        }
        boolean everyOwn = ownTls.stream().allMatch(Optional::isPresent);
        Path chain = everyOwn && !s.has("certificateChain") ? null : file(s, "certificateChain");
        Path key = everyOwn && !s.has("privateKey") ? null : file(s, "privateKey");
        Path trusted = file(s, "trustedCertificates");
        s.done();
        for (int i = 0; i < clusters.size(); i++) {
            OwnFiles own = ownTls.get(i).orElse(null);
            // chain and key are missing only when every cluster has its own
            Tls t = own == null ? new Tls(Objects.requireNonNull(chain), Objects.requireNonNull(key), trusted, auth)
                    : new Tls(file(own.section(), "certificateChain"), file(own.section(), "privateKey"), trusted, auth);
            String where = own == null ? s.path() : own.section().path();
            try {
                t.serverContext();
                t.clientContext();
            } catch (IllegalArgumentException e) {
                throw new ConfigException(where, String.valueOf(e.getMessage()));
            }
            out.put(clusters.get(i).name(), t);
        }
        return out;
    }

    /** {@code security.tls.clientAuth}: none (the default), optional or require. */
    private static ClientAuth clientAuth(Section s) {
        return switch (s.string("clientAuth", "none").toLowerCase(Locale.ROOT)) {
            case "none" -> ClientAuth.NONE;
            case "optional" -> ClientAuth.OPTIONAL;
            case "require" -> ClientAuth.REQUIRE;
            default -> throw new ConfigException(s.key("clientAuth"), "'" + s.string("clientAuth", "")
                    + "' is not one of [none, optional, require]");
        };
    }

    /** A PEM file that exists and can be read. */
    private static Path file(Section s, String name) {
        String value = s.requiredString(name, "a PEM file");
        Path p = Path.of(value);
        if (!Files.isRegularFile(p)) {
            throw new ConfigException(s.key(name), "file " + p + " does not exist");
        }
        if (!Files.isReadable(p)) {
            throw new ConfigException(s.key(name), "file " + p + " cannot be read");
        }
        return p;
    }

    /** A literal, {@code env:NAME} (read from the environment) or {@code sha256:<64 hex>} (verified only). */
    private static Optional<Token> token(Section s, String name, Function<String, String> env, boolean required,
            String expected) {
        Optional<String> given = required ? Optional.of(s.requiredString(name, expected)) : s.optionalString(name);
        if (given.isEmpty()) {
            return Optional.empty();
        }
        String value = given.get();
        if (value.startsWith("env:")) {
            String variable = value.substring(4);
            value = env.apply(variable);
            if (value == null || value.isBlank()) {
                throw new ConfigException(s.key(name), "'env:" + variable
                        + "' names an environment variable that is not set (expected " + expected + " in it)");
            }
        }
        try {
            return Optional.of(Token.parse(value));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(s.key(name), String.valueOf(e.getMessage()));
        }
    }
}
