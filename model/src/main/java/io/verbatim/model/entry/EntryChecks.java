package io.verbatim.model.entry;

import io.verbatim.model.EntryFacts;
import io.verbatim.model.HashRange;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.EntryFormatException.Problem;
import io.verbatim.model.proto.MessageMetadata;
import java.util.Optional;

/** The metadata rules every entry keeps, and what the fit decision reads from them. */
final class EntryChecks {
    private EntryChecks() {
    }

    static void metadata(MessageMetadata md) {
        if (md.getUnknownFields().hasField(MessageMetadata.COMPRESSION_FIELD_NUMBER)) {
            throw new EntryFormatException(Problem.UNKNOWN_CODEC, "compression type "
                    + md.getUnknownFields().getField(MessageMetadata.COMPRESSION_FIELD_NUMBER).getVarintList()
                    + " is not one of NONE, LZ4, ZLIB, ZSTD, SNAPPY");
        }
        if (md.hasNumMessagesInBatch() && md.getNumMessagesInBatch() < 1) {
            throw new EntryFormatException(Problem.BATCH_COUNT_MISMATCH, "num_messages_in_batch "
                    + md.getNumMessagesInBatch() + " is below 1");
        }
        if (md.getUncompressedSize() < 0) {
            throw new EntryFormatException(Problem.OVERSIZED_PAYLOAD, "uncompressed_size "
                    + Integer.toUnsignedString(md.getUncompressedSize()) + " does not fit in an int");
        }
        stamp(md);
    }

    /**
     * The PIP-486 stamp, or empty when absent; both fields or neither, on the ring, min <= max. Without the
     * fields, the {@link Stamp#PROPERTY} that Pulsar 4.0 keeps for them; with both, they must agree.
     */
    static Optional<Stamp> stamp(MessageMetadata md) {
        Optional<Stamp> property = propertyStamp(md);
        if (!md.hasEntryHashMin() && !md.hasEntryHashMax()) {
            return property;
        }
        Optional<Stamp> fields = fieldStamp(md);
        if (property.isPresent() && !property.equals(fields)) {
            throw new EntryFormatException(Problem.BAD_STAMP, "entry stamp fields " + fields.orElseThrow().toProperty()
                    + " disagree with " + Stamp.PROPERTY + " " + property.get().toProperty());
        }
        return fields;
    }

    private static Optional<Stamp> propertyStamp(MessageMetadata md) {
        for (int i = 0; i < md.getPropertiesCount(); i++) {
            if (md.getProperties(i).getKey().equals(Stamp.PROPERTY)) {
                try {
                    return Optional.of(Stamp.parseProperty(md.getProperties(i).getValue()));
                } catch (IllegalArgumentException e) {
                    throw new EntryFormatException(Problem.BAD_STAMP, String.valueOf(e.getMessage()));
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<Stamp> fieldStamp(MessageMetadata md) {
        if (md.hasEntryHashMin() != md.hasEntryHashMax()) {
            throw new EntryFormatException(Problem.BAD_STAMP, "only one of entry_hash_min / entry_hash_max is set");
        }
        long min = Integer.toUnsignedLong(md.getEntryHashMin());
        long max = Integer.toUnsignedLong(md.getEntryHashMax());
        if (max > HashRange.MAX_HASH || min > max) {
            throw new EntryFormatException(Problem.BAD_STAMP, "entry stamp [" + min + ", " + max
                    + "] is not an ascending range of the ring 0..65535");
        }
        return Optional.of(new Stamp((int) min, (int) max));
    }

    /**
     * Facts from the outer metadata. For a batch, the outer key is the first message's, so it says
     * nothing of the others: a batch is never taken for unkeyed and never placed by key.
     */
    static EntryFacts facts(MessageMetadata md) {
        boolean single = !md.hasNumMessagesInBatch();
        boolean encrypted = md.getEncryptionKeysCount() > 0;
        boolean hasKey = md.hasPartitionKey() && !md.getNullPartitionKey();
        Optional<KeyHash> outerKey = single && hasKey ? Optional.of(KeyHash.of(md.getPartitionKey()))
                : Optional.empty();
        return new EntryFacts(stamp(md), single && !hasKey, single, encrypted, outerKey);
    }
}
