package io.verbatim.metastore.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.metastore.proto.LogEntryProto;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * A segment's record: {@code length u32 BE | crc32c u32 BE | body}, the CRC over the four length bytes and
 * the body (a {@link LogEntryProto}). {@link #scan} reads records until the first bad one and says how it
 * is bad, so that recovery can tell a torn tail from corruption.
 */
final class Records {
    static final int HEADER_BYTES = 8;
    /** Larger entries are refused at append: a length beyond it is garbage, not a record. */
    static final int MAX_BODY_BYTES = 64 << 20;

    private Records() {
    }

    static int crc(int length, byte[] body, int bodyOffset) {
        CRC32C crc = new CRC32C();
        crc.update(ByteBuffer.allocate(4).putInt(0, length));
        crc.update(body, bodyOffset, length);
        return (int) crc.getValue();
    }

    static void put(ByteBuffer out, byte[] body) {
        out.putInt(body.length).putInt(crc(body.length, body, 0)).put(body);
    }

    /** What {@link #scan} found: the valid records' offsets, indices and terms, and the damage after them. */
    record Scan(LongArray offsets, LongArray indices, LongArray terms, int validEnd, Damage damage) {
    }

    /** The first bad record: where, why, and whether a valid record follows it (then it is not a torn tail). */
    record Damage(int offset, String problem, boolean followedByValidRecord) {
    }

    static Scan scan(byte[] file, int from) {
        LongArray offsets = new LongArray();
        LongArray indices = new LongArray();
        LongArray terms = new LongArray();
        int pos = from;
        Damage damage = null;
        while (pos < file.length && damage == null) {
            String problem = problemAt(file, pos);
            if (problem == null) {
                try {
                    LogEntryProto entry = LogEntryProto.parseFrom(ByteBuffer.wrap(file, pos + HEADER_BYTES, length(file, pos)));
                    offsets.add(pos);
                    indices.add(entry.getIndex());
                    terms.add(entry.getTerm());
                    pos += HEADER_BYTES + length(file, pos);
                    continue;
                } catch (InvalidProtocolBufferException e) {
                    problem = "record body is not a log entry (" + e.getMessage() + ")";
                }
            }
            boolean framed = problem.startsWith("CRC") || problem.startsWith("record body");
            int next = framed ? pos + HEADER_BYTES + length(file, pos) : -1;
            damage = new Damage(pos, problem, next > 0 && next < file.length && problemAt(file, next) == null);
        }
        return new Scan(offsets, indices, terms, pos, damage);
    }

    /** Null when a whole record with a matching CRC starts at {@code pos}. */
    private static String problemAt(byte[] file, int pos) {
        if (file.length - pos < HEADER_BYTES) {
            return "partial record header (" + (file.length - pos) + " of " + HEADER_BYTES + " bytes)";
        }
        int length = length(file, pos);
        if (length <= 0 || length > MAX_BODY_BYTES) {
            return "implausible record length " + length;
        }
        if ((long) pos + HEADER_BYTES + length > file.length) {
            return "partial record body (" + (file.length - pos - HEADER_BYTES) + " of " + length + " bytes)";
        }
        int stored = ByteBuffer.wrap(file).getInt(pos + 4);
        int actual = crc(length, file, pos + HEADER_BYTES);
        return stored == actual ? null : "CRC mismatch (stored " + Integer.toHexString(stored) + ", computed "
                + Integer.toHexString(actual) + ")";
    }

    private static int length(byte[] file, int pos) {
        return ByteBuffer.wrap(file).getInt(pos);
    }
}
