package io.verbatim.metadatalog.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.metadatalog.proto.HardStateProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * The hard state in two 4 KiB slots of one file (LMDB's two meta pages, TigerBeetle's superblock copies).
 * One slot holds the last <em>forced</em> state; every write goes to the other one, so a torn write never
 * spoils the forced state. A change of term or vote is forced (one fdatasync) and its slot becomes the
 * forced one; a change of the commit index alone is written but not forced: losing it is safe (a lower
 * commit index only delays applying; the leader tells it again), and it spares the second fsync in the
 * sync of nearly every Ready. No rename and no directory fsync, where write-temp-and-rename costs two
 * fsyncs and a rename per change.
 *
 * <p>Slot: {@code magic "VBHS" u32 | sequence u64 | length u32 | crc32c u32 | HardStateProto}, the CRC over
 * the 16 bytes before it and the body. Recovery takes the valid slot with the higher sequence.
 */
final class HardStateFile {
    static final int SLOT_BYTES = 4096;
    static final int SLOT_HEADER_BYTES = 20;
    static final int MAGIC = 0x56424853;

    private final Disk disk;
    private final FileChannel channel;
    private long sequence;
    private HardStateProto state;
    /** The slot holding the last forced state, -1 if none. */
    private int forcedSlot;
    private HardStateProto forcedState;

    private HardStateFile(Disk disk, FileChannel channel, @Nullable Slot latest) {
        this.disk = disk;
        this.channel = channel;
        this.sequence = latest == null ? 0 : latest.sequence;
        this.state = latest == null ? HardStateProto.getDefaultInstance() : latest.state;
        this.forcedSlot = latest == null ? -1 : latest.slot;
        this.forcedState = state;
    }

    static HardStateFile open(Disk disk) throws IOException {
        Path path = disk.dir.resolve(FileNames.HARD_STATE);
        boolean created = !Files.exists(path);
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        if (created) {
            disk.syncDirectory();
        }
        Slot a = readSlot(channel, 0);
        Slot b = readSlot(channel, 1);
        Slot latest = a == null ? b : b == null || a.sequence > b.sequence ? a : b;
        // What was read may be an unforced write still in the page cache: force it before the other slot
        // is written over.
        disk.force(channel, false);
        return new HardStateFile(disk, channel, latest);
    }

    HardStateProto state() {
        return state;
    }

    void write(HardStateProto next) throws IOException {
        byte[] body = next.toByteArray();
        if (body.length > SLOT_BYTES - SLOT_HEADER_BYTES) {
            throw new IllegalArgumentException("hard state of " + body.length + " bytes does not fit a slot of "
                    + (SLOT_BYTES - SLOT_HEADER_BYTES));
        }
        long seq = sequence + 1;
        ByteBuffer slot = ByteBuffer.allocate(SLOT_HEADER_BYTES + body.length);
        slot.putInt(MAGIC).putLong(seq).putInt(body.length).putInt(crc(slot.array(), body)).put(body).flip();
        int target = forcedSlot == 0 ? 1 : 0;
        disk.step("write " + FileNames.HARD_STATE);
        long at = (long) target * SLOT_BYTES;
        while (slot.hasRemaining()) {
            at += channel.write(slot, at);
        }
        disk.counters.bytesWritten += SLOT_HEADER_BYTES + body.length;
        if (next.getCurrentTerm() != forcedState.getCurrentTerm() || !next.getVotedFor().equals(forcedState.getVotedFor())) {
            disk.force(channel, false);
            forcedSlot = target;
            forcedState = next;
        }
        sequence = seq;
        state = next;
    }

    void release() throws IOException {
        channel.close();
    }

    private record Slot(int slot, long sequence, HardStateProto state) {
    }

    private static @Nullable Slot readSlot(FileChannel channel, int slot) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(SLOT_BYTES);
        long at = (long) slot * SLOT_BYTES;
        while (buf.hasRemaining() && channel.read(buf, at + buf.position()) > 0) {
            // read until full or end of file
        }
        buf.flip();
        if (buf.remaining() < SLOT_HEADER_BYTES || buf.getInt(0) != MAGIC) {
            return null;
        }
        long seq = buf.getLong(4);
        int length = buf.getInt(12);
        if (length < 0 || length > buf.remaining() - SLOT_HEADER_BYTES) {
            return null;
        }
        byte[] body = new byte[length];
        buf.get(SLOT_HEADER_BYTES, body);
        if (buf.getInt(16) != crc(buf.array(), body)) {
            return null;
        }
        try {
            return new Slot(slot, seq, HardStateProto.parseFrom(body));
        } catch (InvalidProtocolBufferException e) {
            return null;
        }
    }

    private static int crc(byte[] header, byte[] body) {
        CRC32C crc = new CRC32C();
        crc.update(header, 0, 16);
        crc.update(body);
        return (int) crc.getValue();
    }
}
