package io.verbatim.metadatalog.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.metadatalog.proto.LogEntryProto;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

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
    record Scan(LongArray offsets, LongArray indices, LongArray terms, int validEnd, @Nullable Damage damage) {
    }

    /**
     * The first bad record: where, why, and whether it cannot be a torn write: a valid record follows it
     * and none of its 512-byte sectors is all zeros (a sector the crash kept from the disk, as etcd's WAL
     * tells a torn entry).
     */
    record Damage(int offset, String problem, boolean notATornWrite) {
    }

    static final int SECTOR_BYTES = 512;

    static Scan scan(byte[] file, int from) {
        LongArray offsets = new LongArray();
        LongArray indices = new LongArray();
        LongArray terms = new LongArray();
        int pos = from;
        while (pos < file.length) {
            Problem problem = problemAt(file, pos);
            if (problem == null) {
                try {
                    LogEntryProto entry = LogEntryProto.parseFrom(ByteBuffer.wrap(file, pos + HEADER_BYTES,
                            length(file, pos)));
                    offsets.add(pos);
                    indices.add(entry.getIndex());
                    terms.add(entry.getTerm());
                    pos += HEADER_BYTES + length(file, pos);
                    continue;
                } catch (InvalidProtocolBufferException e) {
                    problem = new Problem("record body is not a log entry (" + e.getMessage() + ")", true);
                }
            }
            // Only a record whose extent is whole tells where the next one starts.
            int next = problem.framed() ? pos + HEADER_BYTES + length(file, pos) : -1;
            boolean followed = next > 0 && next < file.length && problemAt(file, next) == null;
            boolean corrupt = followed && !hasZeroSector(file, pos, next);
            return new Scan(offsets, indices, terms, pos, new Damage(pos, problem.text(), corrupt));
        }
        return new Scan(offsets, indices, terms, pos, null);
    }

    /** Whether a whole 512-byte-aligned sector within {@code [from, to)} is all zeros. */
    private static boolean hasZeroSector(byte[] file, int from, int to) {
        for (int sector = (from + SECTOR_BYTES - 1) / SECTOR_BYTES * SECTOR_BYTES; sector + SECTOR_BYTES <= to;
                sector += SECTOR_BYTES) {
            boolean zeros = true;
            for (int i = sector; i < sector + SECTOR_BYTES && zeros; i++) {
                zeros = file[i] == 0;
            }
            if (zeros) {
                return true;
            }
        }
        return false;
    }

    /** Why no record starts at an offset; {@code framed} if its length field and extent are plausible. */
    private record Problem(String text, boolean framed) {
    }

    /** Null when a whole record with a matching CRC starts at {@code pos}. */
    private static @Nullable Problem problemAt(byte[] file, int pos) {
        if (file.length - pos < HEADER_BYTES) {
            return new Problem("partial record header (" + (file.length - pos) + " of " + HEADER_BYTES + " bytes)", false);
        }
        int length = length(file, pos);
        if (length <= 0 || length > MAX_BODY_BYTES) {
            return new Problem("implausible record length " + length, false);
        }
        if ((long) pos + HEADER_BYTES + length > file.length) {
            return new Problem("partial record body (" + (file.length - pos - HEADER_BYTES) + " of " + length
                    + " bytes)", false);
        }
        int stored = ByteBuffer.wrap(file).getInt(pos + 4);
        int actual = crc(length, file, pos + HEADER_BYTES);
        return stored == actual ? null : new Problem("CRC mismatch (stored " + Integer.toHexString(stored)
                + ", computed " + Integer.toHexString(actual) + ")", true);
    }

    private static int length(byte[] file, int pos) {
        return ByteBuffer.wrap(file).getInt(pos);
    }
}
