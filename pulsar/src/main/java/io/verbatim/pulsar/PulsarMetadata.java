package io.verbatim.pulsar;

import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryFormatException;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import java.util.Optional;
import org.apache.pulsar.common.api.proto.KeyValue;
import org.apache.pulsar.common.api.proto.MessageMetadata;

/**
 * An entry's metadata as the Pulsar 4.0 client carries it ({@code LightProto}'s {@link MessageMetadata}).
 * That client knows no PIP-486 fields (33/34) and drops them, so the stamp also goes as the
 * {@link Stamp#PROPERTY} property, which Verbatim reads in their place.
 */
final class PulsarMetadata {
    private PulsarMetadata() {
    }

    static MessageMetadata of(Entry entry) {
        MessageMetadata md = new MessageMetadata();
        md.parseFrom(entry.metadata().toByteArray());
        stampProperty(entry, md);
        return md;
    }

    /**
     * The same, with the source-position property set to {@code wirePosition} (added if the entry has none):
     * what a replicator producer sends, without stamping the entry once more.
     */
    static MessageMetadata of(Entry entry, SourcePosition wirePosition) {
        MessageMetadata md = of(entry);
        String value = wirePosition.toProperty();
        for (KeyValue kv : md.getPropertiesList()) {
            if (kv.getKey().equals(ReplicationStamp.SOURCE_POSITION_PROPERTY)) {
                kv.setValue(value);
                return md;
            }
        }
        md.addProperty().setKey(ReplicationStamp.SOURCE_POSITION_PROPERTY).setValue(value);
        return md;
    }

    /**
     * The source position {@link #of(Entry, SourcePosition)} set, decoded from its wire form: empty when the metadata
     * has none or one that is not a position.
     */
    static Optional<SourcePosition> sourcePosition(MessageMetadata md) {
        for (KeyValue kv : md.getPropertiesList()) {
            if (kv.getKey().equals(ReplicationStamp.SOURCE_POSITION_PROPERTY)) {
                try {
                    return Optional.of(WirePositions.decode(SourcePosition.parse(kv.getValue())));
                } catch (EntryFormatException | IllegalArgumentException e) {
                    return Optional.empty(); // not one of ours
                }
            }
        }
        return Optional.empty();
    }

    private static void stampProperty(Entry entry, MessageMetadata md) {
        var verbatim = entry.metadata();
        if (verbatim.hasEntryHashMin() && verbatim.hasEntryHashMax() && !hasProperty(md, Stamp.PROPERTY)) {
            md.addProperty().setKey(Stamp.PROPERTY)
                    .setValue(new Stamp(verbatim.getEntryHashMin(), verbatim.getEntryHashMax()).toProperty());
        }
    }

    private static boolean hasProperty(MessageMetadata md, String key) {
        for (KeyValue kv : md.getPropertiesList()) {
            if (kv.getKey().equals(key)) {
                return true;
            }
        }
        return false;
    }
}
