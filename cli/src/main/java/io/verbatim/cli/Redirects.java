package io.verbatim.cli;

import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.ConfigException;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.net.Origin;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;

/**
 * Where the command line follows a node's redirect besides the URL's own origin: the admin URLs of the
 * cluster the URL belongs to (each of its broker processes') and of its controller replicas, read from the
 * nodes' configuration. The
 * admin token goes along, so nowhere else.
 */
record Redirects(Set<Origin> allowed) {
    static final Redirects NONE = new Redirects(Set.of());
    /** The configuration loader's own bound: more is not a configuration. */
    private static final int MAX_CONFIG_BYTES = 1 << 20;

    Redirects {
        allowed = Set.copyOf(allowed);
    }

    boolean allows(Origin origin) {
        return allowed.contains(origin);
    }

    /**
     * The origins {@code config} names for the cluster at {@code url}'s origin; {@link #NONE} without a
     * configuration. Empty (after saying why on stderr) when the file cannot be used or names no cluster there.
     */
    static Optional<Redirects> of(CommandLine.Model.CommandSpec spec, String command, String url, @Nullable Path config) {
        if (config == null) {
            return Optional.of(NONE);
        }
        Optional<Origin> asked = Origin.parse(url);
        if (asked.isEmpty()) {
            spec.commandLine().getErr().println("verbatim " + command + ": '" + url + "' is not an http or https URL");
            return Optional.empty();
        }
        VerbatimConfig parsed;
        try {
            parsed = VerbatimConfig.parse(read(config), Redirects::anyValue);
        } catch (IOException | ConfigException e) {
            spec.commandLine().getErr().println("verbatim " + command + ": --config " + config + ": " + e.getMessage());
            return Optional.empty();
        }
        for (ClusterConfig cluster : parsed.clusters()) {
            ClusterUrls address = ClusterUrls.of(parsed, cluster.name());
            String scheme = parsed.security().tls(cluster.name()).isPresent() ? "https" : "http";
            Set<Origin> origins = new LinkedHashSet<>();
            origins.add(Origin.of(address.adminUrl()));
            cluster.brokerMembers().forEach(m -> origins.add(Origin.of(m.adminUrl(scheme))));
            address.exchangeUrls().forEach(u -> origins.add(Origin.of(u)));
            if (origins.contains(asked.get())) {
                return Optional.of(new Redirects(origins));
            }
        }
        spec.commandLine().getErr().println("verbatim " + command + ": --config " + config + " names no cluster at "
                + asked.get() + " (an admin port of a cluster, of one of its broker members or of one of its controller "
                + "replicas)");
        return Optional.empty();
    }

    /**
     * What {@code env:NAME} stands for while only addresses are read: the variable if set, else a stand-in
     * unique to its name (the command line does not hold the clusters' secrets).
     */
    private static String anyValue(String name) {
        String value = System.getenv(name);
        return value != null && !value.isBlank() ? value : "unset-" + name;
    }

    private static String read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_CONFIG_BYTES + 1);
            if (bytes.length > MAX_CONFIG_BYTES) {
                throw new IOException("more than " + MAX_CONFIG_BYTES + " bytes: a configuration, not data");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
