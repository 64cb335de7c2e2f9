package io.verbatim.metastore.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.metastore.proto.HardStateProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The hard state in two 4 KiB slots of one file, written in turn (LMDB's two meta pages, TigerBeetle's
 * superblock copies): a write goes to the slot not holding the latest state, then one fdatasync. A torn
 * write spoils only the slot being written, so the other still holds the previous state. One fsync per
 * change, no rename and no directory fsync, where write-temp-and-rename costs two fsyncs and a rename.
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

    private HardStateFile(Disk disk, FileChannel channel, long sequence, HardStateProto state) {
        this.disk = disk;
        this.channel = channel;
        this.sequence = sequence;
        this.state = state;
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
        return latest == null
                ? new HardStateFile(disk, channel, 0, HardStateProto.getDefaultInstance())
                : new HardStateFile(disk, channel, latest.sequence, latest.state);
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
        long at = (seq % 2) * SLOT_BYTES;
        while (slot.hasRemaining()) {
            at += channel.write(slot, at);
        }
        disk.force(channel, false);
        disk.counters.bytesWritten += SLOT_HEADER_BYTES + body.length;
        sequence = seq;
        state = next;
    }

    void release() throws IOException {
        channel.close();
    }

    private record Slot(long sequence, HardStateProto state) {
    }

    private static Slot readSlot(FileChannel channel, int slot) throws IOException {
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
            return new Slot(seq, HardStateProto.parseFrom(body));
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
