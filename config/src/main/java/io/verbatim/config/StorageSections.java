package io.verbatim.config;

import static io.verbatim.config.Ranges.MAX_INTERVAL;
import static io.verbatim.config.Ranges.MS;
import static io.verbatim.config.Ranges.TEN_MS;
import static io.verbatim.config.VerbatimConfig.build;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * The storage section of the YAML: the storage type (embedded or Pulsar), the data directory's flush policy and
 * checkpoints, garbage collection.
 */
final class StorageSections {
    private StorageSections() {
    }

    static StorageConfig.Type storageType(Section root) {
        if (root.scalar("storage").isPresent()) {
            return type(root.key("storage"), root.scalar("storage").orElseThrow());
        }
        Section s = root.section("storage");
        return type(s.key("type"), s.string("type", "memory"));
    }

    static StorageConfig.Type type(String key, String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "memory" -> StorageConfig.Type.MEMORY;
            case "pulsar" -> StorageConfig.Type.PULSAR;
            default -> throw new ConfigException(key, "'" + value + "' is not one of [memory, pulsar]");
        };
    }

    static StorageConfig storage(Section root, StorageConfig.Type type, Map<String, PulsarConfig> pulsar) {
        StorageConfig d = StorageConfig.defaults();
        if (root.scalar("storage").isPresent()) {
            return type == StorageConfig.Type.PULSAR ? d.onPulsar(pulsar) : d;
        }
        Section s = root.section("storage");
        s.has("type");
        boolean deleteConsumed = s.bool("deleteConsumed", d.deleteConsumed());
        boolean pruneSealed = s.bool("pruneSealed", d.pruneSealed());
        Duration gcInterval = s.duration("gcInterval", d.gcInterval(), TEN_MS, MAX_INTERVAL);
        StorageConfig.Flush flush = flush(s.key("flush"), s.string("flush", d.flush().toString()));
        long checkpointBytes = s.bytes("checkpointBytes", d.checkpointBytes(), StorageConfig.MIN_CHECKPOINT_BYTES,
                StorageConfig.MAX_CHECKPOINT_BYTES);
        s.done();
        StorageConfig memory = build(s, () -> new StorageConfig(deleteConsumed, pruneSealed, gcInterval)
                .withJournal(flush, checkpointBytes));
        return type == StorageConfig.Type.PULSAR ? memory.onPulsar(pulsar) : memory;
    }

    static StorageConfig.Flush flush(String key, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("batch")) {
            return new StorageConfig.Flush.PerBatch();
        }
        if (v.equals("never")) {
            return new StorageConfig.Flush.Never();
        }
        Duration interval;
        try {
            interval = Durations.parse(key, value);
        } catch (ConfigException e) {
            throw new ConfigException(key, Section.quoted(value) + " is not a flush policy (expected batch, never, or "
                    + "an interval such as 100ms)");
        }
        if (interval.compareTo(MS) < 0 || interval.compareTo(StorageConfig.MAX_FLUSH_INTERVAL) > 0) {
            throw new ConfigException(key, Section.quoted(value) + " is out of range (expected an interval of at "
                    + "least 1ms and at most 1m, or batch, or never)");
        }
        return new StorageConfig.Flush.Every(interval);
    }
}
