package io.verbatim.pulsar.standalone;

import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.broker.ServiceConfiguration;

/**
 * The broker's configuration: a small single-node broker for tests and the demo. RocksDB metadata, one bookie
 * (ensemble, write and ack quorum 1), no functions worker, no transactions, no system topics, no load balancing,
 * topics created on use, deduplication off by default (Verbatim turns it on per destination namespace), infinite
 * retention (nothing stored is deleted, acknowledged or not).
 */
final class BrokerConfig {
    /**
     * A dedup snapshot per entry (Pulsar's default is one per 1000). Pulsar 4.0.7 rebuilds only producer_name →
     * sequence_id from the entries after the last snapshot, not the replicator's position watermark, so without
     * this a repeat after the destination topic reloads is stored again (SPIKE.md, finding 2).
     */
    public static final Map<String, String> DEFAULTS = Map.of("brokerDeduplicationEntriesInterval", "1");

    private BrokerConfig() {
    }

    /**
     * The configuration for {@code args} on resolved (non-zero) ports, with {@link #DEFAULTS} and then {@code
     * args.conf()} applied by property name; an unknown property or a bad value is an {@link
     * IllegalArgumentException} naming it.
     */
    public static ServiceConfiguration of(BrokerArgs args, int brokerPort, int webPort, String metadataStoreUrl) {
        ServiceConfiguration conf = new ServiceConfiguration();
        conf.setClusterName(args.cluster());
        conf.setAdvertisedAddress(args.bindAddress());
        conf.setBindAddress(args.bindAddress());
        conf.setBrokerServicePort(Optional.of(brokerPort));
        conf.setWebServicePort(Optional.of(webPort));
        conf.setMetadataStoreUrl(metadataStoreUrl);
        conf.setRunningStandalone(true);
        conf.setBookkeeperNumberOfChannelsPerBookie(1);
        conf.setManagedLedgerDefaultEnsembleSize(1);
        conf.setManagedLedgerDefaultWriteQuorum(1);
        conf.setManagedLedgerDefaultAckQuorum(1);
        conf.setFunctionsWorkerEnabled(false);
        conf.setTransactionCoordinatorEnabled(false);
        // no __change_events system topics: namespace policies are enough here and start faster
        conf.setSystemTopicEnabled(false);
        conf.setTopicLevelPoliciesEnabled(false);
        conf.setLoadBalancerEnabled(false);
        conf.setAllowAutoTopicCreation(true);
        conf.setBrokerDeduplicationEnabled(false);
        // keep every ledger: Pulsar's default retention (0 min, 0 MB) deletes, when a topic reloads (a restart),
        // every ledger all its subscriptions have acknowledged, and all but the open one of a topic with none (seen:
        // "Removing ledger 1" on the source and "Removing ledger 3" on the destination, 320 of 640 messages gone)
        conf.setDefaultRetentionTimeInMinutes(-1);
        conf.setDefaultRetentionSizeInMB(-1);
        conf.setBrokerShutdownTimeoutMs(3000);
        conf.setManagedLedgerCacheSizeMB(16);
        DEFAULTS.forEach((key, value) -> ConfSetter.set(conf, key, value));
        args.conf().forEach((key, value) -> ConfSetter.set(conf, key, value));
        return conf;
    }

    /** Checks {@code args.conf()} without starting anything: the same errors {@link #of} would throw. */
    public static void validate(BrokerArgs args) {
        of(args, 1, 1, "rocksdb://unused");
    }
}
