package io.verbatim.model;

import java.util.Optional;


/**
 * What the fit decision may know of an entry without opening its payload: the cleartext outer
 * metadata only.
 *
 * @param stamp the PIP-486 stamp, or empty for an unstamped (legacy) entry
 * @param unkeyed every message in the entry is known to have no routing key, so its segment is free
 *        (producers route such messages round-robin); its {@code hashB} is 0 unless an ordering key set it
 * @param singleMessage the entry holds one message, not a batch
 * @param encrypted the payload is end-to-end encrypted: it can be neither read nor split
 * @param outerKey the hash of a single message's cleartext routing key ({@code partition_key}), if
 *        it has one
 */
public record EntryFacts(Optional<Stamp> stamp, boolean unkeyed, boolean singleMessage, boolean encrypted,
        Optional<KeyHash> outerKey) {

    public EntryFacts {
        if (outerKey.isPresent() && !singleMessage) {
            throw new IllegalArgumentException("only a single-message entry has an outer key that places it");
        }
        if (unkeyed && outerKey.isPresent()) {
            throw new IllegalArgumentException("an unkeyed entry cannot have an outer key");
        }
    }

    /** A stamped batch (or keyed message whose key is not at hand). */
    public static EntryFacts stamped(Stamp stamp) {
        return new EntryFacts(Optional.of(stamp), false, false, false, Optional.empty());
    }

    /** An entry without a stamp: always the slow path unless encrypted. */
    public static EntryFacts unstamped() {
        return new EntryFacts(Optional.empty(), false, false, false, Optional.empty());
    }

    public boolean isStamped() {
        return stamp.isPresent();
    }
}
