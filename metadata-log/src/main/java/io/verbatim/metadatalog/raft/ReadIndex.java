package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.ReadIndexReplyProto;
import io.verbatim.metadatalog.proto.ReadIndexRequestProto;
import java.util.List;
import java.util.TreeMap;

/**
 * Linearizable reads for one {@link RaftNode} (etcd's ReadIndex), as leader: a read records the commit
 * index and is answered once a quorum of voters has acknowledged a heartbeat sent after it began (the
 * reads in flight are a {@link ReadIndexQueue}); a new leader starts them only once its no-op commits.
 * Answers to this member's own reads go to the next Ready, others to the member that forwarded them.
 */
final class ReadIndex {
    private final RaftNode node;
    private final String id;
    private final RaftLog log;
    /** The node's progress of each other member, as leader (the node's own map, not a copy). */
    private final TreeMap<String, Progress> progress;
    /** The node's read states for its next Ready (its own list). */
    private final List<Ready.ReadState> readStates;
    private final ReadIndexQueue queue = new ReadIndexQueue();

    ReadIndex(RaftNode node, String id, RaftLog log, TreeMap<String, Progress> progress,
            List<Ready.ReadState> readStates) {
        this.node = node;
        this.id = id;
        this.log = log;
        this.progress = progress;
        this.readStates = readStates;
    }

    /** The newest read context: every heartbeat carries it, and a reply echoes it. */
    long latestContext() {
        return queue.latestContext();
    }

    /** Leadership lost or not yet won: the reads in flight get no answer (their callers time out). */
    void clear() {
        queue.clear();
    }


    /**
     * A read another member forwarded: served if this member leads, else answered with a failure, which that
     * member drops (its caller times out and retries).
     */
    void onRequest(ReadIndexRequestProto r) {
        if (node.role() == RaftPeerRole.LEADER) {
            read(r.getRequestId(), r.getServerRequest().getRequestorId());
        } else {
            node.send(RaftMessageProto.newBuilder().setReadIndexReply(ReadIndexReplyProto.newBuilder()
                    .setServerReply(Messages.reply(r.getServerRequest(), false)).setTerm(node.term())
                    .setRequestId(r.getRequestId())).build());
        }
    }

    /**
     * As leader, a read for {@code requester} (this member, or one that forwarded it): the commit index now,
     * answered once a quorum of voters acknowledged a heartbeat sent after it began.
     */
    void read(long requestId, String requester) {
        if (log.term(log.committed()) != node.term()) {
            // A new leader does not know the commit index until its no-op commits.
            queue.waitForNoOp(requestId, requester);
            return;
        }
        if (node.membership().voters().size() == 1 && node.membership().isVoter(id)) {
            answer(requestId, requester, log.committed());
            return;
        }
        queue.add(requestId, requester, log.committed());
        for (Progress p : progress.values()) {
            if (node.membership().isVoter(p.id)) {
                node.replication().heartbeat(p);
            }
        }
        release();
    }

    /** The no-op of this term committed: the reads that waited for it start now. */
    void noOpCommitted() {
        queue.releaseNoOpWaiters(this);
    }

    /** Answers, in order, every read a quorum of voters has acknowledged (by the context they echoed). */
    void release() {
        queue.release(ctx -> {
            int acks = node.membership().isVoter(id) ? 1 : 0;
            for (String voter : node.membership().voters()) {
                Progress p = progress.get(voter);
                if (p != null && p.ackedReadContext >= ctx) {
                    acks++;
                }
            }
            return acks >= node.membership().quorum();
        }, this::answer);
    }

    private void answer(long requestId, String requester, long index) {
        if (requester.equals(id)) {
            readStates.add(new Ready.ReadState(requestId, index));
        } else {
            node.send(RaftMessageProto.newBuilder().setReadIndexReply(ReadIndexReplyProto.newBuilder()
                    .setServerReply(Messages.reply(node.request(requester).toBuilder().setRequestorId(requester)
                            .setReplyId(id).build(), true))
                    .setTerm(node.term()).setRequestId(requestId).setReadIndex(index)).build());
        }
    }
}
