package io.verbatim.runtime.storage;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import io.verbatim.embedded.Journal.Record;
import io.verbatim.runtime.proto.Acknowledged;
import io.verbatim.runtime.proto.Adopted;
import io.verbatim.runtime.proto.Appended;
import io.verbatim.runtime.proto.CursorOpened;
import io.verbatim.runtime.proto.CursorRemoved;
import io.verbatim.runtime.proto.Ingested;
import io.verbatim.runtime.proto.JournalRecord;
import io.verbatim.runtime.proto.LedgerOpened;
import io.verbatim.runtime.proto.MarkReset;
import io.verbatim.runtime.proto.TopicCreated;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Journal records as the journal's files hold them ({@code journal.proto}), and back. */
final class JournalCodec {
    private JournalCodec() {
    }

    /** A record and its sequence number, as read back. */
    record Sequenced(long sequence, Record record) {
    }

    static JournalRecord toProto(long sequence, Record record) {
        JournalRecord.Builder b = JournalRecord.newBuilder().setSequence(sequence).setTopic(record.topic());
        if (record instanceof Record.TopicCreated r) {
            b.setCreated(TopicCreated.newBuilder().setLayout(LayoutRecords.toProto(r.topic(), r.layout(), List.of()))
                    .putAllLedgers(r.ledgers()));
        } else if (record instanceof Record.LedgerOpened r) {
            b.setLedger(LedgerOpened.newBuilder().setSegmentId(r.segmentId()).setLedgerId(r.ledgerId())
                    .setFirstIndex(r.firstIndex()));
        } else if (record instanceof Record.Appended r) {
            b.setAppended(Appended.newBuilder().setSegmentId(r.segmentId()).setIndex(r.index()).setEntry(bytes(r.bytes()))
                    .setSequence(r.sequence()));
        } else if (record instanceof Record.Ingested r) {
            b.setIngested(Ingested.newBuilder().setSegmentId(r.segmentId()).setIndex(r.index()).setEntry(bytes(r.bytes()))
                    .setProducer(r.producer()).setSession(r.session()).setPosition(StateFormat.position(r.position())));
        } else if (record instanceof Record.CursorOpened r) {
            b.setCursorOpened(CursorOpened.newBuilder().setSegmentId(r.segmentId()).setCursor(r.cursor())
                    .setMarkDelete(r.markDelete()));
        } else if (record instanceof Record.Acknowledged r) {
            b.setAcknowledged(Acknowledged.newBuilder().setSegmentId(r.segmentId()).setCursor(r.cursor())
                    .setMarkDelete(r.markDelete()));
        } else if (record instanceof Record.CursorRemoved r) {
            b.setCursorRemoved(CursorRemoved.newBuilder().setCursor(r.cursor()));
        } else if (record instanceof Record.Adopted r) {
            b.setAdopted(Adopted.newBuilder().setLayout(LayoutRecords.toProto(r.topic(), r.layout(), List.of()))
                    .putAllLedgers(r.ledgers()));
        } else if (record instanceof Record.MarkReset r) {
            b.setMarkReset(MarkReset.newBuilder().setKey(r.key()));
        }
        return b.build();
    }

    /** @throws IllegalArgumentException naming what is wrong when the bytes are not a record */
    static Sequenced fromBytes(ByteBuffer bytes) {
        JournalRecord r;
        try {
            r = JournalRecord.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a journal record: " + e.getMessage(), e);
        }
        return new Sequenced(r.getSequence(), fromProto(r));
    }

    private static Record fromProto(JournalRecord r) {
        String topic = r.getTopic();
        return switch (r.getKindCase()) {
            case CREATED -> new Record.TopicCreated(topic, LayoutRecords.fromProto(r.getCreated().getLayout()),
                    ledgers(r.getCreated().getLedgersMap()));
            case LEDGER -> new Record.LedgerOpened(topic, r.getLedger().getSegmentId(), r.getLedger().getLedgerId(),
                    r.getLedger().getFirstIndex());
            case APPENDED -> new Record.Appended(topic, r.getAppended().getSegmentId(), r.getAppended().getIndex(),
                    r.getAppended().getEntry().asReadOnlyByteBuffer(), r.getAppended().getSequence());
            case INGESTED -> new Record.Ingested(topic, r.getIngested().getSegmentId(), r.getIngested().getIndex(),
                    r.getIngested().getEntry().asReadOnlyByteBuffer(), r.getIngested().getProducer(),
                    r.getIngested().getSession(), StateFormat.position(r.getIngested().getPosition()));
            case CURSOR_OPENED -> new Record.CursorOpened(topic, r.getCursorOpened().getSegmentId(),
                    r.getCursorOpened().getCursor(), r.getCursorOpened().getMarkDelete());
            case ACKNOWLEDGED -> new Record.Acknowledged(topic, r.getAcknowledged().getSegmentId(),
                    r.getAcknowledged().getCursor(), r.getAcknowledged().getMarkDelete());
            case CURSOR_REMOVED -> new Record.CursorRemoved(topic, r.getCursorRemoved().getCursor());
            case ADOPTED -> new Record.Adopted(topic, LayoutRecords.fromProto(r.getAdopted().getLayout()),
                    ledgers(r.getAdopted().getLedgersMap()));
            case MARK_RESET -> new Record.MarkReset(topic, r.getMarkReset().getKey());
            case KIND_NOT_SET -> throw new IllegalArgumentException("journal record " + r.getSequence()
                    + " is of no known kind");
        };
    }

    private static Map<Long, Long> ledgers(Map<Long, Long> proto) {
        return new TreeMap<>(proto);
    }

    private static ByteString bytes(ByteBuffer b) {
        return UnsafeByteOperations.unsafeWrap(b.duplicate()); // stored entries never change
    }
}
