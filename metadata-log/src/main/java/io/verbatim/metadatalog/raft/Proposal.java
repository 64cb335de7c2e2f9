package io.verbatim.metadatalog.raft;

import java.util.Optional;

/**
 * The answer to {@link RaftNode#propose}, {@link RaftNode#setConfiguration} and
 * {@link RaftNode#transferLeadership}.
 */
public sealed interface Proposal {

    /**
     * Taken. For a proposal or configuration: appended at {@code index} in {@code term}; it is committed
     * if and when an entry with this term and index is applied (another entry at that index means it was
     * lost with its leader). For a transfer: started, with {@code index} the log's last index that the
     * target must reach.
     */
    record Accepted(long term, long index) implements Proposal {
    }

    /** This member does not lead; {@code leaderHint} is the leader it last heard from, if any. */
    record NotLeader(Optional<String> leaderHint) implements Proposal {
    }

    /** This member leads but refuses the request now, for {@code reason} (which names the offending member). */
    record Refused(String reason) implements Proposal {
    }

    /**
     * Refused for good: the entry would make an append of {@code messageBytes}, above the largest message
     * the transport sends ({@code maxMessageBytes}); appended, it could never reach a quorum, and nothing
     * would commit behind it.
     *
     * @param commandBytes the command's (or configuration's) own size
     */
    record TooLarge(long commandBytes, long messageBytes, long maxMessageBytes) implements Proposal {
        /** What was refused and why, naming the sizes and the limit. */
        public String reason() {
            return "a command of " + commandBytes + " bytes makes an append of " + messageBytes
                    + " bytes, above the largest message the transport sends (" + maxMessageBytes
                    + " bytes: its frame limit less the frame's header); it could never be sent";
        }
    }
}
