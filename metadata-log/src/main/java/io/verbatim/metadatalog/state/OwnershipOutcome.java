package io.verbatim.metadatalog.state;

import java.util.List;

/** What applying one ownership or member change did: the same on every member. */
public sealed interface OwnershipOutcome {

    /**
     * Applied at log index {@code epoch}, each command on its own: those the register's state refused (a
     * stale epoch, an unknown or inactive member, a segment no layout holds) are named in {@code refused},
     * the others took effect.
     */
    record Applied(long epoch, int applied, List<String> refused) implements OwnershipOutcome {
        public Applied {
            refused = List.copyOf(refused);
        }
    }

    /** The change cannot apply at all: unreadable, or naming nothing. */
    record Invalid(String reason) implements OwnershipOutcome {
    }
}
