package io.verbatim.metadatalog.raft;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.FileChunkProto;
import io.verbatim.metadatalog.proto.InstallSnapshotReplyProto;
import io.verbatim.metadatalog.proto.InstallSnapshotRequestProto;
import io.verbatim.metadatalog.proto.InstallSnapshotResult;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Snapshots for one {@link RaftNode}, both ways. Sending: the latest snapshot this member holds (its own
 * compaction's, or one it received) goes to a member that needs an entry the log dropped, as leader to
 * any member and as a delegate to a listener it feeds, in chunks of {@code snapshotChunkBytes}, one chunk
 * in flight, each reply naming the next offset wanted. Receiving: one sender's snapshot is assembled at a
 * time ({@link SnapshotReceiver}), then the log restarts after it and the node hands it to the driver.
 */
final class SnapshotTransfer {
    private final RaftNode node;
    private final RaftConfig config;
    private final RaftLog log;
    private final RaftCounters counters;
    private final SnapshotReceiver receiver = new SnapshotReceiver();
    /** The latest snapshot this member holds: what it sends a member that needs an entry the log dropped. */
    private SnapshotMetaProto meta;
    private ByteString data;

    SnapshotTransfer(RaftNode node, RaftConfig config, RaftLog log, RaftCounters counters, SnapshotMetaProto meta,
            ByteString data) {
        this.node = node;
        this.config = config;
        this.log = log;
        this.counters = counters;
        this.meta = meta;
        this.data = data;
    }

    /** The application compacted the log into this snapshot: it is the one sent from now on. */
    void hold(SnapshotMetaProto meta, ByteString data) {
        this.meta = meta;
        this.data = data;
    }

    /** Starts sending {@code p} the latest snapshot: it needs an entry the log dropped. */
    void start(Progress p) {
        p.becomeSnapshot(meta, data, node.lastCallId());
        sendChunk(p);
    }

    /** Sends {@code p} the chunk of its snapshot at its offset (a leader's, or a delegate's fromFollower). */
    void sendChunk(Progress p) {
        ByteString sending = p.sendingSnapshotData();
        long offset = Math.min(p.snapshotOffset, sending.size());
        int end = (int) Math.min(sending.size(), offset + config.snapshotChunkBytes());
        ByteString chunk = sending.substring((int) offset, end);
        counters.snapshotSent(p.id, chunk.size());
        InstallSnapshotRequestProto.Builder s = InstallSnapshotRequestProto.newBuilder()
                .setServerRequest(node.request(p.id)).setLeaderTerm(node.term()).setSnapshot(p.sendingSnapshot())
                .setTotalSize(sending.size())
                .setChunk(FileChunkProto.newBuilder().setOffset(offset).setData(chunk).setDone(end == sending.size()));
        if (node.role() != RaftPeerRole.LEADER) {
            s.setFromFollower(true).setLeaderId(node.leader());
        }
        node.send(RaftMessageProto.newBuilder().setInstallSnapshot(s).build());
    }

    /**
     * A reply to a snapshot chunk this member sent, as leader ({@code p} the member's progress) or as a
     * delegate ({@code p} the listener's appender); null if it is neither's.
     */
    void onReply(String from, @Nullable Progress p, InstallSnapshotReplyProto r) {
        if (p == null) {
            return;
        }
        if (r.getResult() == InstallSnapshotResult.SNAPSHOT_NOT_LEADER && node.role() == RaftPeerRole.FOLLOWER) {
            node.delegation().dropAppender(from);
            return;
        }
        p.recentActive = true;
        p.lastResponseTick = node.ticks();
        p.waitingSinceTick = node.ticks();
        if (p.state != Progress.State.SNAPSHOT
                || r.getSnapshotIndex() != p.sendingSnapshot().getLastIncluded().getIndex()) {
            return;
        }
        switch (r.getResult()) {
            case SNAPSHOT_SUCCESS, SNAPSHOT_IN_PROGRESS -> {
                if (r.getNextOffset() != p.snapshotOffset
                        || r.getResult() == InstallSnapshotResult.SNAPSHOT_IN_PROGRESS) {
                    p.snapshotOffset = r.getNextOffset();
                    sendChunk(p);
                }
            }
            case SNAPSHOT_INSTALLED, ALREADY_INSTALLED -> {
                // Installed, or that member committed past it: committed prefixes agree, so it holds the
                // leader's log up to the snapshot's index.
                boolean advanced = r.getSnapshotIndex() > p.match;
                if (advanced) {
                    p.match = r.getSnapshotIndex();
                    p.matchCallId = r.getServerReply().getCallId();
                }
                p.becomeProbe(p.match + 1, node.lastCallId());
                node.maybeCommit();
                if (advanced) {
                    node.delegation().onListenerMatchAdvanced(p);
                }
                if (node.role() == RaftPeerRole.LEADER || node.delegation().appender(from) == p) {
                    node.replication().sendAppend(p, true);
                }
            }
            default -> {
            }
        }
    }

    /**
     * Takes a chunk of a snapshot from {@code from} (the leader, or a delegate to a member that takes its
     * messages) and answers it; once it has the whole snapshot, restores the log from it and hands it to the
     * node to install. Returns whether it did.
     */
    boolean receive(String from, InstallSnapshotRequestProto s) {
        long index = s.getSnapshot().getLastIncluded().getIndex();
        InstallSnapshotReplyProto.Builder reply = InstallSnapshotReplyProto.newBuilder().setTerm(node.term())
                .setSnapshotIndex(index);
        if (index <= log.committed()) {
            reply(s, reply.setResult(InstallSnapshotResult.ALREADY_INSTALLED).setNextOffset(s.getTotalSize()));
            return false;
        }
        Optional<ByteString> whole = receiver.offer(from, s);
        if (whole.isEmpty()) {
            reply(s, reply.setResult(receiver.expects(from, s) ? InstallSnapshotResult.SNAPSHOT_SUCCESS
                    : InstallSnapshotResult.SNAPSHOT_IN_PROGRESS).setNextOffset(receiver.nextOffset(from, s)));
            return false;
        }
        SnapshotMetaProto received = s.getSnapshot();
        log.restore(index, received.getLastIncluded().getTerm(), received.getConfiguration(),
                config.logTailEntries());
        meta = received;
        data = whole.get();
        node.restored(received, whole.get());
        reply(s, reply.setResult(InstallSnapshotResult.SNAPSHOT_INSTALLED).setNextOffset(s.getTotalSize()));
        return true;
    }

    /**
     * Answers {@code s} with {@code reply}: a success unless the chunk was not taken (SNAPSHOT_IN_PROGRESS)
     * or refused (SNAPSHOT_NOT_LEADER).
     */
    void reply(InstallSnapshotRequestProto s, InstallSnapshotReplyProto.Builder reply) {
        reply.setServerReply(Messages.reply(s.getServerRequest(),
                reply.getResult() != InstallSnapshotResult.SNAPSHOT_IN_PROGRESS
                        && reply.getResult() != InstallSnapshotResult.SNAPSHOT_NOT_LEADER));
        node.send(RaftMessageProto.newBuilder().setInstallSnapshotReply(reply).build());
    }
}
