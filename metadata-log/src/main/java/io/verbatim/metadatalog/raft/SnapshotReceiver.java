package io.verbatim.metadatalog.raft;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.InstallSnapshotRequestProto;
import io.verbatim.metadatalog.proto.TermIndexProto;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Assembles one incoming snapshot from its chunks, in offset order, from one sender. A chunk at offset 0
 * starts over (from whichever sender sent it); a chunk from the sender of the snapshot being assembled, of
 * its term and last entry, at the expected offset extends it; anything else is ignored and answered with
 * the offset expected of its sender (0: start over), so that sender resends from there.
 *
 * <p>Keyed by sender as well as by term and last entry: in one term a listener may get a snapshot from
 * the leader and from a delegate still feeding it (a revocation or restoration not yet known to the
 * delegate), and two members' snapshots at the same index need not be the same bytes, so their chunks
 * are never spliced. The later starter wins; the other is answered offset 0. They compete only until the
 * delegate learns the assignment (pushed at once) or stops following, as only one of them is meant to
 * feed the listener at a time.
 */
final class SnapshotReceiver {
    /** The member whose snapshot is being assembled; "" when none is. */
    private String sender = "";
    private long leaderTerm = -1;
    /** The snapshot being assembled; null when none is. */
    private @Nullable TermIndexProto lastIncluded;
    private ByteString received = ByteString.EMPTY;

    /** Takes a chunk from {@code from}; returns the whole snapshot once its last chunk arrived. */
    Optional<ByteString> offer(String from, InstallSnapshotRequestProto s) {
        long offset = s.getChunk().getOffset();
        if (offset == 0) {
            sender = from;
            leaderTerm = s.getLeaderTerm();
            lastIncluded = s.getSnapshot().getLastIncluded();
            received = ByteString.EMPTY;
        } else if (!expects(from, s) || offset != received.size()) {
            return Optional.empty();
        }
        received = received.concat(s.getChunk().getData());
        if (s.getChunk().getDone() && received.size() == s.getTotalSize()) {
            ByteString whole = received;
            sender = "";
            lastIncluded = null;
            received = ByteString.EMPTY;
            return Optional.of(whole);
        }
        return Optional.empty();
    }

    /** Whether {@code s} from {@code from} belongs to the snapshot being assembled. */
    boolean expects(String from, InstallSnapshotRequestProto s) {
        return lastIncluded != null && sender.equals(from) && leaderTerm == s.getLeaderTerm()
                && lastIncluded.equals(s.getSnapshot().getLastIncluded());
    }

    /** The offset of the next chunk wanted from {@code from} for {@code s} (0: start over). */
    long nextOffset(String from, InstallSnapshotRequestProto s) {
        return expects(from, s) ? received.size() : 0;
    }
}
