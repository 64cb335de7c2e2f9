package io.verbatim.model.entry;

/**
 * What a replicator writes into an entry's metadata: {@code replicated_from} (which also stops the
 * entry from being replicated again) and the source position property.
 */
public record ReplicationStamp(String sourceCluster, SourcePosition position) {
    /** Pulsar's property for the source position ({@code GeoPersistentReplicator}). */
    public static final String SOURCE_POSITION_PROPERTY = "__MSG_PROP_REPL_SOURCE_POSITION";

    public ReplicationStamp {
        if (sourceCluster == null || sourceCluster.isEmpty()) {
            throw new IllegalArgumentException("a replication stamp needs a source cluster name");
        }
        if (position == null) {
            throw new IllegalArgumentException("a replication stamp needs a source position");
        }
    }
}
