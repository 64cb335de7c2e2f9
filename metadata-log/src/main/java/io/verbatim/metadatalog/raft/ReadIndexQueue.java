package io.verbatim.metadatalog.raft;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * A leader's linearizable reads in flight (etcd's readOnly, ReadIndex option Safe). Each read records the
 * commit index when it arrived and a context number; heartbeats carry the newest context, replies echo it.
 * A read is answered once a quorum of voters echoed a context at least its own: each of them recognised
 * this leader after the read began, so no other leader had committed anything then.
 */
final class ReadIndexQueue {
    private record Read(long context, long requestId, String requester, long index) {
    }

    private record Waiting(long requestId, String requester) {
    }

    interface Answer {
        void answer(long requestId, String requester, long index);
    }

    private final ArrayDeque<Read> pending = new ArrayDeque<>();
    private final List<Waiting> waitingForNoOp = new ArrayList<>();
    private long context;

    long latestContext() {
        return context;
    }

    void add(long requestId, String requester, long index) {
        pending.addLast(new Read(++context, requestId, requester, index));
    }

    void waitForNoOp(long requestId, String requester) {
        waitingForNoOp.add(new Waiting(requestId, requester));
    }

    /** The no-op of the term committed: the reads that waited for it start now. */
    void releaseNoOpWaiters(ReadIndex reads) {
        if (waitingForNoOp.isEmpty()) {
            return;
        }
        List<Waiting> now = new ArrayList<>(waitingForNoOp);
        waitingForNoOp.clear();
        for (Waiting w : now) {
            reads.read(w.requestId(), w.requester());
        }
    }

    /** Answers, in order, every read whose context a quorum acknowledged. */
    void release(LongPredicate quorumAcked, Answer answer) {
        while (!pending.isEmpty() && quorumAcked.test(pending.peekFirst().context())) {
            Read r = pending.pollFirst();
            answer.answer(r.requestId(), r.requester(), r.index());
        }
    }

    /** Leadership lost: the reads in flight get no answer (their callers time out). */
    void clear() {
        pending.clear();
        waitingForNoOp.clear();
    }
}
