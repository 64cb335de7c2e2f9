package io.verbatim.metadatalog.raft;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.ListenerAssignmentProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import java.util.ArrayDeque;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The leader's view of one other member, voter or listener (etcd's tracker.Progress): how much of the log
 * is known to match there, what to send next, and how. Updated only from that member's own replies.
 */
final class Progress {
    enum State { PROBE, REPLICATE, SNAPSHOT }

    final String id;
    long match;
    long next;
    State state = State.PROBE;
    /**
     * In PROBE, an append is out: wait for a reply (to it, or to a later heartbeat) before sending another.
     * Heartbeats never carry entries, so a probe's entries go once, not once per heartbeat.
     */
    boolean probeSent;
    /**
     * The last call id the leader had used when this member entered its current state: a rejection answering
     * a request up to it (sent before a probe restarted or the window opened) is stale, as the state already
     * reflects something at least as recent, and requests sent since bring their own answers.
     */
    long since;
    /** The call id of the request whose SUCCESS reply proved {@link #match}. */
    long matchCallId;
    /** In REPLICATE, the last index of each append with entries not yet acknowledged, oldest first. */
    final ArrayDeque<Long> inflight = new ArrayDeque<>();
    boolean recentActive;
    long lastResponseTick = -1;
    long followerCommit;
    long ackedReadContext;
    /** In SNAPSHOT, the snapshot being sent and its data; null in the other states. */
    @Nullable SnapshotMetaProto snapshot;
    @Nullable ByteString snapshotData;
    long snapshotOffset;

    // Listener delegation, on the leader's progress of a listener.
    /**
     * As the listener said in its last reply (AppendEntries reply field 10): it is a voter of its own latest
     * configuration, so it refuses delegates; the leader feeds it itself meanwhile.
     */
    boolean ownVoter;
    /** The follower feeding this listener now, "" when the leader feeds it (not delegated, or revoked). */
    String delegatedTo = "";
    /**
     * The follower the admin last assigned this listener to, as this leader last saw it ("" for none): the
     * revocation state below belongs to that assignment, and a new assignment starts without it.
     */
    String assignedFollower = "";
    /**
     * As leader, to a voter: the listener assignment last attached to an append to it (null: none yet this
     * term), the call id of the first append that carried it, whether the voter answered one of those
     * (every append carries it until then), and the tick it last went (a heartbeat carries it again once an
     * election timeout has passed since).
     */
    @Nullable ListenerAssignmentProto assignmentSent;
    long assignmentFirstCallId;
    boolean assignmentAcked;
    long assignmentSentTick;
    /** The leader revoked the admin's delegation of this listener (it feeds it directly meanwhile). */
    boolean revoked;
    long revokedTick = -1;
    String revocationReason = "";
    long revocations;
    /**
     * Revocations since the delegation last stayed in force for a while: each doubles the cooldown before
     * the next restoration (capped); reset once a restored delegation stays in force long enough and its
     * delegate feeds the listener meanwhile, or when the admin assigns the listener anew.
     */
    int revocationsInARow;
    /** The tick at which the delegation was last put in force (by the admin's assignment or a restoration). */
    long delegatedSinceTick = -1;
    /**
     * The leader's last index when the delegation was last put in force: the leader sends a delegated
     * listener no entries, so a match above it proves the delegate fed it while in force (a late reply to
     * the leader's own direct feed never reaches past it).
     */
    long delegatedAtLastIndex = -1;
    /** On a voter's progress: the tick since which it lags the commit past the threshold, -1 while within it. */
    long laggingSinceTick = -1;
    /** The tick at which {@link #match} last advanced (or the delegation began). */
    long matchTick;
    /**
     * On a delegate's appender: the tick since which it has waited for an answer (the last reply, or the
     * send that ended an idle spell); an append unanswered for a while is sent again.
     */
    long waitingSinceTick;

    /** Whether something sent is unanswered: a probe, appends in the window, or a snapshot. */
    boolean awaitingReply() {
        return state == State.SNAPSHOT || probeSent || !inflight.isEmpty();
    }

    Progress(String id, long next) {
        this.id = id;
        this.next = next;
    }

    void becomeProbe(long nextIndex, long lastCallId) {
        state = State.PROBE;
        since = lastCallId;
        next = Math.max(nextIndex, match + 1);
        probeSent = false;
        inflight.clear();
        snapshot = null;
        snapshotData = null;
    }

    void becomeReplicate(long lastCallId) {
        state = State.REPLICATE;
        since = lastCallId;
        next = match + 1;
        probeSent = false;
        inflight.clear();
    }

    void becomeSnapshot(SnapshotMetaProto meta, ByteString data, long lastCallId) {
        state = State.SNAPSHOT;
        since = lastCallId;
        inflight.clear();
        probeSent = false;
        snapshot = meta;
        snapshotData = data;
        snapshotOffset = 0;
    }

    /** In SNAPSHOT, the meta of the snapshot being sent. */
    SnapshotMetaProto sendingSnapshot() {
        return Objects.requireNonNull(snapshot, () -> id + " is not being sent a snapshot (" + state + ")");
    }

    /** In SNAPSHOT, the data of the snapshot being sent. */
    ByteString sendingSnapshotData() {
        return Objects.requireNonNull(snapshotData, () -> id + " is not being sent a snapshot (" + state + ")");
    }

    /** Acknowledged up to {@code index}: free the appends it covers. */
    void freeTo(long index) {
        while (!inflight.isEmpty() && inflight.peekFirst() <= index) {
            inflight.pollFirst();
        }
    }
}
