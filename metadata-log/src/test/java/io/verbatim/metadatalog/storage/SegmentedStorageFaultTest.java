package io.verbatim.metadatalog.storage;

import static io.verbatim.metadatalog.storage.Entries.entry;
import static io.verbatim.metadatalog.storage.Entries.hardState;
import static io.verbatim.metadatalog.storage.Entries.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.storage.RaftStorage.Recovered;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded runs of appends, replacements, hard states, syncs, snapshots, crashes cut at a random byte of
 * the unsynced tail, processes killed between any two disk steps of an operation (a truncation across
 * segments, a snapshot and its compaction, a roll), and bit flips in what was durable, against a model.
 * After every recovery the log is at least what was durable and a prefix of what was written (for a killed
 * operation: of the log before it or after it, never a mix); a torn tail is never an error, a flipped
 * byte before it always is. {@code -Dverbatim.seeds=N} runs more seeds (200 by default);
 * {@code -Dverbatim.seed=S} replays one.
 */
class SegmentedStorageFaultTest {
    @TempDir
    Path root;

    @Test
    void recoveredLogLiesBetweenWhatWasDurableAndWhatWasWritten() {
        long only = Long.getLong("verbatim.seed", -1L);
        int seeds = only >= 0 ? 1 : Integer.getInteger("verbatim.seeds", 200);
        long first = only >= 0 ? only : 1;
        int crashes = 0;
        for (long seed = first; seed < first + seeds; seed++) {
            try {
                crashes += new Run(seed, root.resolve("seed-" + seed)).go();
            } catch (Throwable t) {
                throw new AssertionError("seed " + seed + " failed (replay with -Dverbatim.seed=" + seed + "): " + t, t);
            }
        }
        assertThat(crashes).isGreaterThan(seeds);
    }

    /** One seeded run: the storage under test and the model it must agree with. */
    private static final class Run {
        private final Random random;
        private final Path dir;
        private final StorageOptions options;
        private SegmentedRaftStorage storage;
        private long snapshotIndex;
        private long snapshotTerm;
        private long term = 1;
        /** Entries after the snapshot as written, and the prefix of them certainly durable. */
        private List<LogEntryProto> written = new ArrayList<>();
        private int durable;
        private HardStateProto hardStateWritten = HardStateProto.getDefaultInstance();
        private HardStateProto hardStateDurable = HardStateProto.getDefaultInstance();
        private final Killer killer = new Killer();
        private boolean killed;

        Run(long seed, Path dir) {
            this.random = new Random(seed);
            this.dir = dir;
            this.options = StorageOptions.unsafeNoFsync().withMaxSegmentBytes(150 + random.nextInt(900));
        }

        int go() throws IOException {
            storage = open();
            int crashes = 0;
            int steps = 30 + random.nextInt(40);
            for (int step = 0; step < steps; step++) {
                int op = random.nextInt(100);
                if (op < 35) {
                    extend();
                } else if (op < 45) {
                    replace(false);
                } else if (op < 50) {
                    replace(true);
                } else if (op < 58) {
                    saveHardState();
                } else if (op < 72) {
                    sync();
                } else if (op < 77) {
                    compact(true);
                } else if (op < 79) {
                    compact(false);
                } else if (op < 85) {
                    crashes += interrupted() ? 1 : 0;
                } else if (op < 92) {
                    crash(false);
                    crashes++;
                } else if (op < 97) {
                    crash(true);
                    crashes++;
                } else {
                    reopen();
                }
            }
            storage.close();
            return crashes;
        }

        private SegmentedRaftStorage open() {
            return SegmentedRaftStorage.open(dir, options, killer);
        }

        /** Runs a storage call; a kill by {@link #killer} is noted, not thrown. */
        private void call(Runnable storageCall) {
            try {
                storageCall.run();
            } catch (UncheckedIOException e) {
                if (!(e.getCause() instanceof Killed)) {
                    throw e;
                }
                killed = true;
            }
        }

        private record State(long snapshotIndex, List<LogEntryProto> written, int durable,
                HardStateProto hardStateWritten, HardStateProto hardStateDurable) {
        }

        private State state() {
            return new State(snapshotIndex, List.copyOf(written), durable, hardStateWritten, hardStateDurable);
        }

        /** An operation killed after a random number of disk steps; true if the kill came before it ended. */
        private boolean interrupted() {
            State before = state();
            killed = false;
            killer.stepsLeft = random.nextInt(14);
            switch (random.nextInt(5)) {
                case 0 -> extend();
                case 1 -> replace(false);
                case 2 -> compact(true);
                case 3 -> compact(false);
                default -> sync();
            }
            killer.stepsLeft = -1;
            if (!killed) {
                return false;
            }
            State after = state();
            storage.abandon();
            storage = open();
            Recovered r = storage.recover();
            long snap = r.snapshot().map(m -> m.getLastIncluded().getIndex()).orElse(0L);
            List<LogEntryProto> got = r.entries();
            boolean compacted = after.snapshotIndex() != before.snapshotIndex();
            // A cut killed half-way may leave the old log shorter than its durable part, but never shorter
            // than the cut: what it lost was being replaced anyway.
            boolean asBefore = snap == before.snapshotIndex() && isPrefix(got, before.written())
                    && got.size() >= (compacted ? before.durable() : Math.min(before.durable(), after.durable()));
            boolean asAfter = snap == after.snapshotIndex() && isPrefix(got, after.written())
                    && got.size() >= (compacted ? after.written().size() : Math.min(before.durable(), after.durable()));
            assertThat(asBefore || asAfter).as("after a kill: snapshot %d, %d entries %s; before %s; after %s", snap,
                    got.size(), got.stream().map(e -> e.getTerm() + "/" + e.getIndex()).toList(), brief(before),
                    brief(after)).isTrue();
            assertThat(r.hardState()).isIn(raised(before.hardStateDurable(), got), raised(before.hardStateWritten(), got));
            written = new ArrayList<>(got);
            snapshotIndex = snap;
            hardStateWritten = r.hardState();
            storage.sync();
            durable = got.size();
            hardStateDurable = hardStateWritten;
            term = Math.max(term, r.hardState().getCurrentTerm());
            return true;
        }

        private static String brief(State s) {
            return "snapshot " + s.snapshotIndex() + ", " + s.durable() + " durable of "
                    + s.written().stream().map(e -> e.getTerm() + "/" + e.getIndex()).toList();
        }

        private static boolean isPrefix(List<LogEntryProto> got, List<LogEntryProto> of) {
            return got.size() <= of.size() && got.equals(of.subList(0, got.size()));
        }

        private static HardStateProto raised(HardStateProto state, List<LogEntryProto> log) {
            long lastTerm = log.isEmpty() ? 0 : log.get(log.size() - 1).getTerm();
            return lastTerm > state.getCurrentTerm()
                    ? state.toBuilder().setCurrentTerm(lastTerm).clearVotedFor().build()
                    : state;
        }

        private long lastIndex() {
            return snapshotIndex + written.size();
        }

        private List<LogEntryProto> batch(long from, int count, long batchTerm) {
            List<LogEntryProto> out = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                out.add(entry(batchTerm, from + i, random.nextInt(120)));
            }
            return out;
        }

        private void extend() {
            if (random.nextInt(5) == 0) {
                term++;
            }
            List<LogEntryProto> b = batch(lastIndex() + 1, 1 + random.nextInt(6), term);
            call(() -> storage.append(b));
            written.addAll(b);
        }

        /** A conflicting suffix from a new term, or ({@code resend}) a stored stretch sent again. */
        private void replace(boolean resend) {
            if (written.isEmpty()) {
                return;
            }
            int at = random.nextInt(written.size());
            long from = snapshotIndex + 1 + at;
            List<LogEntryProto> b;
            if (resend) {
                b = List.copyOf(written.subList(at, at + 1 + random.nextInt(written.size() - at)));
            } else {
                term++;
                b = batch(from, 1 + random.nextInt(6), term);
            }
            List<LogEntryProto> sent = b;
            call(() -> storage.append(sent));
            // the cut is durable at once: all before it is durable too
            int same = 0;
            while (same < b.size() && at + same < written.size() && written.get(at + same).equals(b.get(same))) {
                same++;
            }
            int cut = at + same;
            if (cut < written.size()) {
                written = new ArrayList<>(written.subList(0, cut));
                durable = cut;
            }
            written.addAll(b.subList(same, b.size()));
        }

        private void saveHardState() {
            if (random.nextInt(3) == 0) {
                term++;
            }
            hardStateWritten = hardState(term, "m" + random.nextInt(3), random.nextInt((int) lastIndex() + 1));
            storage.saveHardState(hardStateWritten);
        }

        private void sync() {
            call(storage::sync);
            durable = written.size();
            hardStateDurable = hardStateWritten;
        }

        private void compact(boolean agreeing) {
            long index;
            long snapTerm;
            if (agreeing) {
                if (written.isEmpty()) {
                    return;
                }
                index = snapshotIndex + 1 + random.nextInt(written.size());
                snapTerm = written.get((int) (index - snapshotIndex - 1)).getTerm();
            } else {
                term++;
                index = snapshotIndex + 1 + random.nextInt(written.size() + 5);
                snapTerm = term;
            }
            long at = index;
            call(() -> storage.saveSnapshot(snapshot(snapTerm, at), ByteString.copyFromUtf8("state " + at)));
            hardStateDurable = hardStateWritten;
            written = agreeing
                    ? new ArrayList<>(written.subList((int) (index - snapshotIndex), written.size()))
                    : new ArrayList<>();
            durable = written.size();
            snapshotIndex = index;
            snapshotTerm = snapTerm;
        }

        /** Kills the process, cuts the unsynced tail at a random byte, maybe flips a durable byte first. */
        private void crash(boolean flip) throws IOException {
            SegmentedRaftStorage.CrashPoint point = storage.abandon();
            if (point.openSegment() != null) {
                SegmentedRaftStorageContractTest.cut(point.openSegment(),
                        point.syncedBytes() + (long) (random.nextDouble() * (point.writtenBytes() - point.syncedBytes() + 1)));
            }
            if (flip) {
                flipAndRestore(point.openSegment());
            }
            storage = open();
            check(false);
        }

        private void reopen() {
            storage.close();
            storage = open();
            hardStateDurable = hardStateWritten;
            durable = written.size();
            check(true);
        }

        private void check(boolean clean) {
            Recovered r = storage.recover();
            List<LogEntryProto> got = r.entries();
            assertThat(r.snapshot().map(m -> m.getLastIncluded().getIndex()).orElse(0L)).isEqualTo(snapshotIndex);
            assertThat(got.size()).as("recovered entries").isBetween(clean ? written.size() : durable, written.size());
            assertThat(got).as("recovered entries are a prefix of the written ones").isEqualTo(written.subList(0, got.size()));
            assertThat(r.hardState()).isEqualTo(raised(hardStateDurable, got));
            if (snapshotIndex > 0) {
                assertThat(storage.snapshotData()).contains(ByteString.copyFromUtf8("state " + snapshotIndex));
            }
            if (!got.isEmpty()) {
                long maxBytes = random.nextInt(400);
                List<LogEntryProto> read = storage.read(snapshotIndex + 1, lastIndex() + 1, maxBytes);
                assertThat(read).isNotEmpty().isEqualTo(got.subList(0, read.size()));
            }
            written = new ArrayList<>(got);
            durable = got.size();
            // a raised term is in memory only, written with the next sync
            hardStateWritten = r.hardState();
            term = Math.max(term, r.hardState().getCurrentTerm());
        }

        /**
         * Flips one byte that recovery must notice: anywhere in a closed segment after the snapshot, or in
         * the body of an open-segment record that a whole record follows. Then open must fail, naming the
         * file; the byte is put back.
         */
        private void flipAndRestore(Path openSegment) throws IOException {
            List<Path> closed;
            try (Stream<Path> files = Files.list(dir)) {
                closed = files.filter(p -> FileNames.parseSegment(p.getFileName().toString())
                        .filter(n -> !n.open() && n.last() > snapshotIndex).isPresent()).toList();
            }
            Path target;
            long offset;
            List<long[]> records = openSegment == null ? List.of() : records(openSegment);
            if (!closed.isEmpty() && (records.size() < 2 || random.nextBoolean())) {
                target = closed.get(random.nextInt(closed.size()));
                offset = (long) (random.nextDouble() * Files.size(target));
            } else if (records.size() >= 2) {
                long[] record = records.get(random.nextInt(records.size() - 1));
                target = openSegment;
                offset = record[0] + Records.HEADER_BYTES + (long) (random.nextDouble() * record[1]);
            } else {
                return;
            }
            flip(target, offset);
            assertThatThrownBy(() -> SegmentedRaftStorage.open(dir, options))
                    .as("flipped byte %d of %s", offset, target)
                    .isInstanceOf(StorageCorruptionException.class)
                    .hasMessageContaining(target.getFileName().toString());
            flip(target, offset);
        }

        /** Kills the process (throws) when {@code stepsLeft} disk steps have run; never while negative. */
        private static final class Killer implements Disk.Steps {
            int stepsLeft = -1;

            @Override
            public void before(String step) throws IOException {
                if (stepsLeft == 0) {
                    stepsLeft = -1;
                    throw new Killed(step);
                }
                if (stepsLeft > 0) {
                    stepsLeft--;
                }
            }
        }

        private static final class Killed extends IOException {
            Killed(String step) {
                super("killed before " + step);
            }
        }

        /** (offset, body length) of every whole record in a segment file. */
        private static List<long[]> records(Path segment) throws IOException {
            byte[] bytes = Files.readAllBytes(segment);
            List<long[]> out = new ArrayList<>();
            int pos = Segment.HEADER_BYTES;
            while (pos + Records.HEADER_BYTES <= bytes.length) {
                int length = ByteBuffer.wrap(bytes).getInt(pos);
                if (length <= 0 || pos + Records.HEADER_BYTES + length > bytes.length) {
                    break;
                }
                out.add(new long[] {pos, length});
                pos += Records.HEADER_BYTES + length;
            }
            return out;
        }

        private static void flip(Path file, long offset) throws IOException {
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                f.seek(offset);
                int b = f.read();
                f.seek(offset);
                f.write(b ^ 0x01);
            }
        }
    }
}
