package io.verbatim.metadatalog.storage;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.proto.StateMachineLogEntryProto;
import io.verbatim.metadatalog.proto.TermIndexProto;
import java.util.ArrayList;
import java.util.List;

/** Test values: entries, hard states, snapshot metas. */
final class Entries {
    private Entries() {
    }

    static LogEntryProto entry(long term, long index) {
        return entry(term, index, 20);
    }

    static LogEntryProto entry(long term, long index, int payloadBytes) {
        byte[] payload = new byte[payloadBytes];
        for (int i = 0; i < payloadBytes; i++) {
            payload[i] = (byte) (index * 31 + term * 7 + i);
        }
        return LogEntryProto.newBuilder().setTerm(term).setIndex(index)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFrom(payload)))
                .build();
    }

    /** Entries {@code [from, to]} of one term. */
    static List<LogEntryProto> entries(long term, long from, long to) {
        List<LogEntryProto> out = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            out.add(entry(term, i));
        }
        return out;
    }

    static HardStateProto hardState(long term, String vote, long commit) {
        return HardStateProto.newBuilder().setCurrentTerm(term).setVotedFor(vote).setCommitIndex(commit).build();
    }

    static SnapshotMetaProto snapshot(long term, long index) {
        return SnapshotMetaProto.newBuilder()
                .setLastIncluded(TermIndexProto.newBuilder().setTerm(term).setIndex(index)).build();
    }

    static List<LogEntryProto> concat(List<LogEntryProto> a, List<LogEntryProto> b) {
        List<LogEntryProto> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
