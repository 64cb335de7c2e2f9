package io.verbatim.embedded;

import io.verbatim.embedded.Journal.Record;

/** How each journal record is applied again to the cluster it was written by (see {@link MemoryCluster#replay}). */
final class Replay {
    private Replay() {
    }

    static void apply(MemoryCluster c, Record record) {
        if (!record.topic().equals(c.topic())) {
            throw new IllegalArgumentException("a record of topic " + record.topic() + " replayed on " + c.topic());
        }
        if (record instanceof Record.LedgerOpened r) {
            c.replayLedger(r.segmentId(), r.ledgerId(), r.firstIndex());
        } else if (record instanceof Record.Appended r) {
            c.replayEntry(r.segmentId(), r.index(), r.bytes());
            c.replaySequence(r.sequence());
        } else if (record instanceof Record.Ingested r) {
            c.replayEntry(r.segmentId(), r.index(), r.bytes());
            c.replayPersisted(r.segmentId(), r.producer(), r.session(), r.position());
        } else if (record instanceof Record.CursorOpened r) {
            c.replayCursor(r.segmentId(), r.cursor(), r.markDelete());
        } else if (record instanceof Record.Acknowledged r) {
            c.replayAcknowledged(r.segmentId(), r.cursor(), r.markDelete());
        } else if (record instanceof Record.CursorRemoved r) {
            c.replayRemoved(r.cursor());
        } else if (record instanceof Record.Adopted r) {
            c.replayAdopted(r.layout(), r.ledgers());
        } else if (record instanceof Record.MarkReset r) {
            c.replayMarkReset(r.key());
        } else if (record instanceof Record.TopicCreated r) {
            throw new IllegalStateException(c.topic() + ": the journal creates the topic again (at epoch "
                    + r.layout().epoch() + ") after what the cluster was restored from");
        }
    }
}
