package io.verbatim.pulsar;

import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entry;
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
        var verbatim = entry.metadata();
        if (verbatim.hasEntryHashMin() && verbatim.hasEntryHashMax() && !hasProperty(md, Stamp.PROPERTY)) {
            md.addProperty().setKey(Stamp.PROPERTY)
                    .setValue(new Stamp(verbatim.getEntryHashMin(), verbatim.getEntryHashMax()).toProperty());
        }
        return md;
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
