package io.verbatim.pipeline;

import java.util.concurrent.atomic.LongAdder;

/**
 * Plain counters of one replicator, or summed over several (a {@link ReplicationLink}'s, or more links'). The
 * core only increments them; {@link PipelineMetricsBinder} shows them to Micrometer.
 */
public final class ReplicatorMetrics {
    final LongAdder verbatimEntries = new LongAdder();
    final LongAdder verbatimBytes = new LongAdder();
    final LongAdder rebatchedEntries = new LongAdder();
    final LongAdder rebatchedBytes = new LongAdder();
    final LongAdder rebatchedParts = new LongAdder();
    final LongAdder skippedReplicated = new LongAdder();
    final LongAdder expired = new LongAdder();
    final LongAdder unroutable = new LongAdder();
    final LongAdder sendFailures = new LongAdder();
    final LongAdder duplicateReceipts = new LongAdder();
    final LongAdder rewinds = new LongAdder();
    /** Replicators a {@link ReplicationLink} restarted after they failed. */
    final LongAdder restarts = new LongAdder();
    /** Replicators that failed and have not made progress since (a level, not a count of events). */
    final LongAdder failing = new LongAdder();

    public long verbatimEntries() {
        return verbatimEntries.sum();
    }

    public long verbatimBytes() {
        return verbatimBytes.sum();
    }

    public long rebatchedEntries() {
        return rebatchedEntries.sum();
    }

    public long rebatchedBytes() {
        return rebatchedBytes.sum();
    }

    public long rebatchedParts() {
        return rebatchedParts.sum();
    }

    public long skippedReplicated() {
        return skippedReplicated.sum();
    }

    public long expired() {
        return expired.sum();
    }

    public long unroutable() {
        return unroutable.sum();
    }

    public long sendFailures() {
        return sendFailures.sum();
    }

    public long duplicateReceipts() {
        return duplicateReceipts.sum();
    }

    public long rewinds() {
        return rewinds.sum();
    }

    /** Restarts of failed replicators, by every {@link ReplicationLink} counting here. */
    public long restarts() {
        return restarts.sum();
    }

    /** Replicators currently failing: failed, and no progress since. */
    public long failing() {
        return failing.sum();
    }

    void count(Unit unit) {
        switch (unit.path()) {
            case VERBATIM:
                verbatimEntries.increment();
                verbatimBytes.add(unit.bytes());
                break;
            case REBATCHED:
                rebatchedEntries.increment();
                rebatchedBytes.add(unit.bytes());
                rebatchedParts.add(unit.sends().size());
                break;
            case SKIPPED_REPLICATED:
                skippedReplicated.increment();
                break;
            case SKIPPED_EXPIRED:
                expired.increment();
                break;
            default:
                unroutable.increment();
                break;
        }
    }
}
