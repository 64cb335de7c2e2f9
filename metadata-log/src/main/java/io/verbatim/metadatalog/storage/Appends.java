package io.verbatim.metadatalog.storage;

import io.verbatim.metadatalog.proto.LogEntryProto;
import java.util.List;
import java.util.function.LongUnaryOperator;

/** The rules of {@link RaftStorage#append}, shared by both storages so that they refuse the same batches. */
final class Appends {
    private Appends() {
    }

    /**
     * Checks {@code entries} against a log holding {@code (snapshotIndex, lastIndex]} and returns how many
     * of them it already stores (same index and term: the same entry, by Raft's Log Matching). The log
     * changes from {@code first + that}: cut there if it is at or before {@code lastIndex}, then the rest
     * appended.
     */
    static int check(List<LogEntryProto> entries, long snapshotIndex, long lastIndex, LongUnaryOperator termAt) {
        long first = entries.get(0).getIndex();
        if (first <= snapshotIndex || first > lastIndex + 1) {
            throw new IllegalArgumentException("entries start at " + first + " but must start in ["
                    + (snapshotIndex + 1) + ", " + (lastIndex + 1) + "]");
        }
        for (int i = 0; i < entries.size(); i++) {
            LogEntryProto e = entries.get(i);
            if (e.getIndex() != first + i || (i > 0 && e.getTerm() < entries.get(i - 1).getTerm())) {
                throw new IllegalArgumentException("entries must be consecutive with non-decreasing terms; entry "
                        + i + " of the batch is (term " + e.getTerm() + ", index " + e.getIndex() + ")");
            }
            if (e.getSerializedSize() > Records.MAX_BODY_BYTES) {
                throw new IllegalArgumentException("entry " + e.getIndex() + " is " + e.getSerializedSize()
                        + " bytes, more than " + Records.MAX_BODY_BYTES);
            }
        }
        int same = 0;
        while (same < entries.size() && first + same <= lastIndex
                && termAt.applyAsLong(first + same) == entries.get(same).getTerm()) {
            same++;
        }
        long cut = first + same;
        if (same < entries.size() && entries.get(same).getTerm() < termAt.applyAsLong(cut - 1)) {
            throw new IllegalArgumentException("entry " + cut + " has term " + entries.get(same).getTerm()
                    + ", lower than the term " + termAt.applyAsLong(cut - 1) + " of the entry before it");
        }
        return same;
    }
}
