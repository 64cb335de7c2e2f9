package io.verbatim.metadatalog.storage;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * {@code snapshot_<term>_<index>}: {@code magic "VBSN" u32 | version u32 | metaLength u32 | dataLength u64
 * | SnapshotMetaProto | data | crc32c u32}, the CRC over everything before it. Written to a {@code .tmp},
 * forced, renamed, the directory forced: a crash leaves the old snapshot or the new one, never half.
 */
final class SnapshotFile {
    static final int MAGIC = 0x5642534E;
    static final int VERSION = 1;
    static final int HEADER_BYTES = 20;

    private SnapshotFile() {
    }

    /** Writes the file durably and returns its path. */
    static Path write(Disk disk, SnapshotMetaProto meta, ByteString data) throws IOException {
        String name = FileNames.snapshot(meta.getLastIncluded().getTerm(), meta.getLastIncluded().getIndex());
        Path tmp = disk.dir.resolve(name + FileNames.TMP_SUFFIX);
        Path path = disk.dir.resolve(name);
        byte[] metaBytes = meta.toByteArray();
        CRC32C crc = new CRC32C();
        disk.step("write " + tmp.getFileName());
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            OutputStream out = Channels.newOutputStream(channel);
            ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).putInt(MAGIC).putInt(VERSION)
                    .putInt(metaBytes.length).putLong(data.size());
            crc.update(header.array());
            crc.update(metaBytes);
            for (ByteBuffer b : data.asReadOnlyByteBufferList()) {
                crc.update(b);
            }
            out.write(header.array());
            out.write(metaBytes);
            data.writeTo(out);
            out.write(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
            out.flush();
            disk.force(channel, true);
        }
        disk.counters.bytesWritten += HEADER_BYTES + metaBytes.length + data.size() + 4;
        disk.rename(tmp, path);
        return path;
    }

    /** A snapshot read back whole and checked. */
    record Loaded(SnapshotMetaProto meta, ByteString data) {
    }

    /** The snapshot in {@code path}, or a {@link StorageCorruptionException} saying what is wrong with it. */
    static Loaded read(Path path) throws IOException {
        byte[] bytes = Files.readAllBytes(path);
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        if (bytes.length < HEADER_BYTES + 4 || buf.getInt(0) != MAGIC || buf.getInt(4) != VERSION) {
            throw new StorageCorruptionException(path, 0, "not a version " + VERSION + " snapshot file");
        }
        int metaLength = buf.getInt(8);
        long dataLength = buf.getLong(12);
        if (metaLength < 0 || dataLength < 0 || HEADER_BYTES + 4L + metaLength + dataLength != bytes.length) {
            throw new StorageCorruptionException(path, 8, "lengths (meta " + metaLength + ", data " + dataLength
                    + ") do not match the file's " + bytes.length + " bytes");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, bytes.length - 4);
        if ((int) crc.getValue() != buf.getInt(bytes.length - 4)) {
            throw new StorageCorruptionException(path, bytes.length - 4, "CRC mismatch");
        }
        SnapshotMetaProto meta = SnapshotMetaProto.parseFrom(ByteBuffer.wrap(bytes, HEADER_BYTES, metaLength));
        return new Loaded(meta, ByteString.copyFrom(bytes, HEADER_BYTES + metaLength, (int) dataLength));
    }
}
