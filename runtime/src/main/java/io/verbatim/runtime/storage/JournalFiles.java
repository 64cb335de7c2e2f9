package io.verbatim.runtime.storage;

import io.verbatim.runtime.storage.JournalCodec.Sequenced;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Reads a journal's files back at start ({@link FileJournal} wrote them): every whole record, in sequence order.
 * A crash leaves at most a torn tail, a record written in part at the end of the last file written: it is cut
 * off (the file truncated to its last whole record), since nothing in it was acknowledged; so is a tail of zeros
 * (a file the file system grew before the bytes written into it reached the disk). A record that does not check
 * out anywhere else means the files are damaged, and the read fails naming the file and the offset.
 */
final class JournalFiles {
    private static final Pattern NAME = Pattern.compile(Pattern.quote(FileJournal.PREFIX) + "(\\d{20})"
            + Pattern.quote(FileJournal.SUFFIX));
    /** No record is larger: a length above it is damage, not a record. */
    static final int MAX_RECORD_BYTES = 1 << 30;
    private static final Logger LOG = Loggers.getLogger(JournalFiles.class);

    private JournalFiles() {
    }

    /**
     * What the files hold.
     *
     * @param files every file, by its first sequence number (empty files included)
     * @param records every whole record, in order
     * @param cut how many bytes of a torn tail were cut off
     */
    record Read(Map<Long, Path> files, List<Sequenced> records, long cut) {
        /** The sequence number after the last record, or {@code floor} when there is none. */
        long nextSequence(long floor) {
            return records.isEmpty() ? floor : Math.max(floor, records.get(records.size() - 1).sequence() + 1);
        }
    }

    /**
     * Reads (and repairs a torn tail of) every journal file in {@code dir}; none when it does not exist.
     *
     * @param checkpointed the checkpoint's next journal sequence number (0: none): a file may start past the records
     *        before it up to there, since the checkpoint holds what the missing records held (a run that started
     *        from it began its file there, after a crash lost records the checkpoint had taken in)
     */
    static Read read(Path dir, long checkpointed) {
        TreeMap<Long, Path> files = new TreeMap<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> list = Files.list(dir)) {
                list.forEach(p -> {
                    Matcher m = NAME.matcher(p.getFileName().toString());
                    if (m.matches()) {
                        files.put(Long.parseLong(m.group(1)), p);
                    }
                });
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list the journal in " + dir + ": " + e.getMessage(), e);
            }
        }
        List<Sequenced> records = new ArrayList<>();
        Map<Path, Long> torn = new TreeMap<>();
        Path tornIn = null;
        for (Map.Entry<Long, Path> f : files.entrySet()) {
            Path file = f.getValue();
            int before = records.size();
            long tornAt = readFile(file, f.getKey(), records);
            if (records.size() > before) {
                if (tornIn != null) {
                    throw damaged(tornIn, "it ends in a damaged record at byte " + torn.get(tornIn) + ", and "
                            + file.getFileName() + " has records after it");
                }
                long expected = before > 0 ? records.get(before - 1).sequence() + 1 : -1;
                if (before > 0 && f.getKey() != expected && !(f.getKey() > expected && f.getKey() <= checkpointed)) {
                    throw damaged(file, "it starts at sequence number " + f.getKey() + ", but the file before it ends"
                            + " at " + records.get(before - 1).sequence() + " (a journal file is missing)");
                }
            }
            if (tornAt >= 0) {
                torn.put(file, tornAt);
                tornIn = file;
            }
        }
        long cut = 0; // only once all of it was read: damage found later must not cost what a cut would drop
        for (Map.Entry<Path, Long> t : torn.entrySet()) {
            long bytes = truncate(t.getKey(), t.getValue());
            LOG.warn("the journal file {} ends in a torn tail (a crash while it was written): {} byte(s) from byte {}"
                    + " cut off", t.getKey(), bytes, t.getValue());
            cut += bytes;
        }
        return new Read(files, records, cut);
    }

    /**
     * Adds the file's whole records; the offset of its torn tail, or -1 when it ends cleanly. A record that does
     * not check out is a torn tail when nothing but zeros follows it, or it runs to the end of the file (a crash
     * while it was written, or after the file grew and before its bytes reached the disk); anywhere else it is
     * damage.
     */
    private static long readFile(Path file, long firstSequence, List<Sequenced> records) {
        ByteBuffer bytes;
        try {
            bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the journal file " + file + ": " + e.getMessage(), e);
        }
        CRC32C crc = new CRC32C();
        long expected = firstSequence;
        while (bytes.hasRemaining()) {
            int at = bytes.position();
            if (bytes.remaining() < 8) {
                return at;
            }
            int length = bytes.getInt(at);
            int sum = bytes.getInt(at + 4);
            if (length <= 0 || length > MAX_RECORD_BYTES || length > bytes.remaining() - 8) {
                // no record is empty: a zero length is where the written bytes end
                return tail(file, bytes, at, length > bytes.remaining() - 8 ? -1 : at + 8 + Math.max(length, 0),
                        "a record length of " + length);
            }
            ByteBuffer body = bytes.duplicate().position(at + 8).limit(at + 8 + length);
            crc.reset();
            crc.update(body.duplicate());
            if ((int) crc.getValue() != sum) {
                return tail(file, bytes, at, at + 8 + length, "a record whose CRC does not match");
            }
            Sequenced r;
            try {
                r = JournalCodec.fromBytes(body.slice());
            } catch (IllegalArgumentException e) {
                return tail(file, bytes, at, at + 8 + length, "a record that cannot be read (" + e.getMessage() + ")");
            }
            if (r.sequence() != expected) {
                throw damaged(file, "the record at byte " + at + " has sequence number " + r.sequence() + ", not "
                        + expected);
            }
            records.add(r);
            expected++;
            bytes.position(at + 8 + length);
        }
        return -1;
    }

    /**
     * {@code at}, where a bad record starts, when it is a torn tail: the record runs to the end of the file
     * ({@code end} is where it ends, -1: past the end) or only zeros follow it.
     *
     * @throws IllegalStateException naming the file and the offset otherwise (damage in the middle of the file)
     */
    private static long tail(Path file, ByteBuffer bytes, int at, long end, String what) {
        if (end < 0 || end == bytes.limit() || zerosFrom(bytes, at)) {
            return at;
        }
        throw damaged(file, "it has " + what + " at byte " + at + ", and " + (bytes.limit() - end)
                + " byte(s) that are not zeros follow it");
    }

    private static boolean zerosFrom(ByteBuffer bytes, int at) {
        for (int i = at; i < bytes.limit(); i++) {
            if (bytes.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static long truncate(Path file, long at) {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
            long cut = c.size() - at;
            c.truncate(at);
            c.force(true);
            return cut;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot cut the torn tail of " + file + ": " + e.getMessage(), e);
        }
    }

    private static IllegalStateException damaged(Path file, String what) {
        return new IllegalStateException("the journal file " + file + " is damaged: " + what + ". Move the journal"
                + " directory away to start from the last checkpoint (what was stored since it is then lost)");
    }
}
