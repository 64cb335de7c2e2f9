package io.verbatim.metastore.raft;

import com.google.protobuf.ByteString;
import io.verbatim.metastore.proto.InstallSnapshotRequestProto;
import io.verbatim.metastore.proto.TermIndexProto;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Assembles one incoming snapshot from its chunks, in offset order. A chunk at offset 0 starts over; a
 * chunk at the expected offset of the snapshot being assembled extends it; anything else is ignored and
 * answered with the offset expected, so the leader resends from there.
 */
final class SnapshotReceiver {
    private long leaderTerm = -1;
    /** The snapshot being assembled; null when none is. */
    private @Nullable TermIndexProto lastIncluded;
    private ByteString received = ByteString.EMPTY;

    /** Takes a chunk; returns the whole snapshot once its last chunk arrived. */
    Optional<ByteString> offer(InstallSnapshotRequestProto s) {
        long offset = s.getChunk().getOffset();
        if (offset == 0) {
            leaderTerm = s.getLeaderTerm();
            lastIncluded = s.getSnapshot().getLastIncluded();
            received = ByteString.EMPTY;
        } else if (!expects(s) || offset != received.size()) {
            return Optional.empty();
        }
        received = received.concat(s.getChunk().getData());
        if (s.getChunk().getDone() && received.size() == s.getTotalSize()) {
            ByteString whole = received;
            lastIncluded = null;
            received = ByteString.EMPTY;
            return Optional.of(whole);
        }
        return Optional.empty();
    }

    /** Whether {@code s} belongs to the snapshot being assembled. */
    boolean expects(InstallSnapshotRequestProto s) {
        return lastIncluded != null && leaderTerm == s.getLeaderTerm()
                && lastIncluded.equals(s.getSnapshot().getLastIncluded());
    }

    /** The offset of the next chunk wanted for {@code s} (0: start over). */
    long nextOffset(InstallSnapshotRequestProto s) {
        return expects(s) ? received.size() : 0;
    }
}
