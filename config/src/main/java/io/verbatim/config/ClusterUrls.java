package io.verbatim.config;

import java.util.List;

/**
 * Where a peer is reached: its admin URL (its first broker process's), its brokers' ingest URLs (every broker
 * member's, in the file's order), and where its exchange answers (its controller replicas' admin URLs when they
 * run as processes of their own, else its admin URL).
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
     * Where cluster {@code name} of {@code config} is reached: its members' advertised addresses and named ports,
     * over HTTPS when it serves TLS.
     */
    public static ClusterUrls of(VerbatimConfig config, String name) {
        ClusterConfig cluster = config.cluster(name);
        String scheme = config.security().tls(name).isPresent() ? "https" : "http";
        String admin = cluster.brokerMembers().get(0).adminUrl(scheme);
        List<String> exchange = cluster.separateControllers()
                ? cluster.controllers().stream().map(c -> c.adminUrl(scheme)).toList() : List.of(admin);
        return new ClusterUrls(admin, ingestUrls(cluster, scheme), exchange);
    }

    /** Every broker member's ingest URLs, in the file's order (each member's in broker order). */
    public static List<String> ingestUrls(ClusterConfig cluster, String scheme) {
        return cluster.brokerMembers().stream().flatMap(m -> m.ingestUrls(scheme).stream()).toList();
    }
}
