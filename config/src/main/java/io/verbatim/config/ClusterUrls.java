package io.verbatim.config;

import java.util.List;

/**
 * Where a peer is reached: its admin URL, its brokers' ingest URLs, and where its exchange answers (its
 * controller replicas' admin URLs when they run as processes of their own, else its admin URL).
 */
public record ClusterUrls(String adminUrl, List<String> brokerUrls, List<String> exchangeUrls) {
    public ClusterUrls {
        brokerUrls = List.copyOf(brokerUrls);
        exchangeUrls = List.copyOf(exchangeUrls);
        if (exchangeUrls.isEmpty()) {
            throw new IllegalArgumentException("no exchange URL for " + adminUrl);
        }
    }

    public ClusterUrls(String adminUrl, List<String> brokerUrls) {
        this(adminUrl, brokerUrls, List.of(adminUrl));
    }

    /**
     * Where cluster {@code name} of {@code config} is reached: its advertised address and named ports, over
     * HTTPS when it serves TLS.
     */
    public static ClusterUrls of(VerbatimConfig config, String name) {
        ClusterConfig cluster = config.cluster(name);
        Addresses a = cluster.addresses();
        String scheme = config.security().tls(name).isPresent() ? "https" : "http";
        String admin = a.advertisedUrl(scheme, a.adminPort());
        List<String> exchange = cluster.separateControllers()
                ? cluster.controllers().stream().map(c -> c.adminUrl(scheme)).toList() : List.of(admin);
        return new ClusterUrls(admin, a.brokerPorts().stream().map(p -> a.advertisedUrl(scheme, p)).toList(), exchange);
    }
}
