package io.verbatim.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where one cluster's segments live when {@code storage.type} is {@code pulsar}: its Pulsar ({@code
 * clusters[].pulsar} in the file).
 *
 * @param serviceUrl the broker's binary protocol, {@code pulsar://host:port} or {@code pulsar+ssl://host:port}
 * @param adminUrl the broker's admin REST endpoint, {@code http://host:port} or {@code https://host:port}
 * @param namespace {@code tenant/namespace} holding the cluster's segment topics (the tenant must exist;
 *        the namespace is created, with broker deduplication on)
 * @param token the JWT the broker's token authentication takes, if it has authentication on
 * @param trustCertsFile the PEM file of the CA that signed the broker's certificate, for TLS URLs whose
 *        certificate the JVM's default trust store does not cover
 */
public record PulsarConfig(String serviceUrl, String adminUrl, String namespace, Optional<String> token,
        Optional<Path> trustCertsFile) {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    public PulsarConfig {
        urlProblem(serviceUrl, "pulsar", "pulsar+ssl").ifPresent(p -> {
            throw new IllegalArgumentException("serviceUrl " + p);
        });
        urlProblem(adminUrl, "http", "https").ifPresent(p -> {
            throw new IllegalArgumentException("adminUrl " + p);
        });
        namespaceProblem(namespace).ifPresent(p -> {
            throw new IllegalArgumentException("namespace " + p);
        });
        if (token.isPresent() && token.get().isBlank()) {
            throw new IllegalArgumentException("token is blank (expected the JWT the broker takes, or no token)");
        }
    }

    /** Whether either URL asks for TLS. */
    public boolean tls() {
        return serviceUrl.startsWith("pulsar+ssl://") || adminUrl.startsWith("https://");
    }

    /** What is wrong with {@code url} as a URL of one of {@code schemes} with a host and a port, if anything. */
    static Optional<String> urlProblem(String url, String... schemes) {
        String expected = " (expected " + String.join("://host:port or ", schemes) + "://host:port)";
        if (url == null || url.isBlank()) {
            return Optional.of("is missing" + expected);
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            return Optional.of("'" + url + "' is not a URL" + expected);
        }
        if (uri.getScheme() == null || Arrays.stream(schemes).noneMatch(uri.getScheme()::equals)) {
            return Optional.of("'" + url + "' has the wrong scheme" + expected);
        }
        if (uri.getHost() == null || uri.getPort() < 1) {
            return Optional.of("'" + url + "' names no host and port" + expected);
        }
        return Optional.empty();
    }

    /** What is wrong with {@code namespace} as Pulsar's {@code tenant/namespace}, if anything. */
    static Optional<String> namespaceProblem(String namespace) {
        String[] parts = namespace == null ? new String[0] : namespace.split("/", -1);
        if (parts.length != 2 || !NAME.matcher(parts[0]).matches() || !NAME.matcher(parts[1]).matches()) {
            return Optional.of("'" + namespace + "' is not tenant/namespace (expected two names of letters, digits, "
                    + "'.', '_' or '-', e.g. public/us-east)");
        }
        return Optional.empty();
    }
}
