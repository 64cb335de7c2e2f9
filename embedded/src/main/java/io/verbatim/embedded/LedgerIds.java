package io.verbatim.embedded;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Where a {@link MemorySegments}'s segments get their ledger ids. A segment opens a new ledger whenever it
 * is opened (created, or restored after a restart), as a Pulsar topic does at every load, and a source
 * position is {@code (ledgerId, entryId)}: so a segment never hands out a position it handed out before,
 * whatever a restart lost, and the destinations' deduplication by source position stays sound.
 */
public interface LedgerIds {

    /** The id of a new ledger of segment {@code segmentId}: above every id this source gave that segment before. */
    long next(long segmentId);

    /**
     * One ledger per segment, numbered as the segment: for clusters that live as long as their process (tests,
     * benchmarks, the one-process demo). A restored cluster needs {@link #fromFloor}.
     */
    static LedgerIds segmentIds() {
        return segmentId -> segmentId;
    }

    /**
     * Ids counted up from {@code floor} (one counter for every segment and topic of a node, as Pulsar's ledger
     * ids are one counter per cluster). {@link #atLeast} raises the counter past ids found on restart.
     */
    static Counter fromFloor(long floor) {
        return new Counter(floor);
    }

    /** A counter of ledger ids. */
    final class Counter implements LedgerIds {
        private final AtomicLong next;

        private Counter(long floor) {
            if (floor < 0) {
                throw new IllegalArgumentException("ledger id floor " + floor + " is negative");
            }
            this.next = new AtomicLong(floor);
        }

        @Override
        public long next(long segmentId) {
            return next.getAndIncrement();
        }

        /** Makes every later id above {@code ledgerId} (an id found in what a restart recovered). */
        public void atLeast(long ledgerId) {
            next.accumulateAndGet(ledgerId + 1, Math::max);
        }

        /** The id the next ledger gets. */
        public long peek() {
            return next.get();
        }
    }
}
