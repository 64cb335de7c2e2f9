package io.verbatim.pipeline;

import io.verbatim.model.entry.SourcePosition;
import java.nio.ByteBuffer;

/**
 * One committed entry of a segment log: its position and its bytes as stored (Pulsar's entry format).
 *
 * @param position the ledger and entry id; always a whole-entry position
 * @param bytes read-only view of the stored bytes
 */
public record StoredEntry(SourcePosition position, ByteBuffer bytes) {
    public StoredEntry {
        if (!position.isWhole()) {
            throw new IllegalArgumentException("a stored entry's position " + position + " cannot name a part");
        }
        bytes = bytes.asReadOnlyBuffer();
    }
}
