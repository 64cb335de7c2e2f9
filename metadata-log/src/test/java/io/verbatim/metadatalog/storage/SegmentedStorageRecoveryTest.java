package io.verbatim.metadatalog.storage;

import static io.verbatim.metadatalog.storage.Entries.concat;
import static io.verbatim.metadatalog.storage.Entries.entries;
import static io.verbatim.metadatalog.storage.Entries.hardState;
import static io.verbatim.metadatalog.storage.Entries.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.metadatalog.proto.LogEntryProto;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What recovery makes of the files a crash or a bad disk leaves. */
class SegmentedStorageRecoveryTest {
    @TempDir
    Path dir;

    /** A record of {@link Entries#entry(long, long)} below index 128: 8 bytes of header, 28 of entry. */
    private static final int RECORD = 36;
    private static final StorageOptions SMALL = StorageOptions.unsafeNoFsync().withMaxSegmentBytes(300);

    private SegmentedRaftStorage open() {
        return SegmentedRaftStorage.open(dir, SMALL);
    }

    private List<String> segmentNames() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".seg")).sorted().toList();
        }
    }

    private Path openSegment() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("log_inprogress_")).findFirst().orElseThrow();
        }
    }

    private static void flip(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0x5A);
        }
    }

    /** Writes 1..n of term 1 in segments of 300 bytes and closes. */
    private void writeLog(int n) {
        try (SegmentedRaftStorage s = open()) {
            s.append(entries(1, 1, n));
        }
    }

    @Test
    void closedSegmentsAreNamedByTheirRangeAndTheOpenOneByItsFirstIndex() throws IOException {
        writeLog(20);
        // header 8 + records of 8 + 28 bytes: 8 per segment
        assertThat(segmentNames()).containsExactly("log_1-8.seg", "log_9-16.seg", "log_inprogress_17.seg");
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.metrics().segments()).isEqualTo(3);
            s.append(entries(2, 5, 6));
        }
        assertThat(segmentNames()).containsExactly("log_inprogress_1.seg");
    }

    @Test
    void tornTailIsCutWhereverTheCrashHit() throws IOException {
        writeLog(20);
        long size = Files.size(openSegment());
        long recordBytes = RECORD;
        for (long cut = size - 1; cut > size - recordBytes * 2; cut--) {
            SegmentedRaftStorageContractTest.cut(openSegment(), cut);
            try (SegmentedRaftStorage s = open()) {
                long whole = (cut - Segment.HEADER_BYTES) / recordBytes;
                assertThat(s.recover().entries()).isEqualTo(entries(1, 1, 16 + whole));
                assertThat(s.metrics().bytesTruncatedAtRecovery()).isEqualTo(cut - Segment.HEADER_BYTES - whole * recordBytes);
                s.append(entries(1, 17 + whole, 20));
            }
            assertThat(Files.size(openSegment())).isEqualTo(size);
        }
    }

    @Test
    void crcMismatchInTheLastRecordIsATornTail() throws IOException {
        writeLog(20);
        Path open = openSegment();
        flip(open, Files.size(open) - 3);
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().entries()).isEqualTo(entries(1, 1, 19));
            assertThat(s.metrics().recordsTruncatedAtRecovery()).isEqualTo(1);
        }
    }

    @Test
    void corruptRecordFollowedByAValidOneIsAnErrorNamingFileAndOffset() throws IOException {
        writeLog(20);
        Path open = openSegment();
        flip(open, Segment.HEADER_BYTES + RECORD + 20);
        assertThatThrownBy(this::open).isInstanceOf(StorageCorruptionException.class)
                .hasMessageContaining(open.toString()).hasMessageContaining("offset 44")
                .hasMessageContaining("not a torn tail")
                .satisfies(e -> assertThat(((StorageCorruptionException) e).offset()).isEqualTo(44));
        // nothing was cut: the same error again
        assertThatThrownBy(this::open).isInstanceOf(StorageCorruptionException.class);
    }

    @Test
    void aRecordWithAnUnwrittenSectorIsATornWriteEvenIfLaterOnesReachedTheDisk() throws IOException {
        try (SegmentedRaftStorage s = SegmentedRaftStorage.open(dir, StorageOptions.unsafeNoFsync())) {
            s.append(List.of(Entries.entry(1, 1, 100), Entries.entry(1, 2, 2000), Entries.entry(1, 3, 100)));
        }
        // writeback kept the sector at 1024 of entry 2 from the disk, but wrote entry 3
        Path open = openSegment();
        try (RandomAccessFile f = new RandomAccessFile(open.toFile(), "rw")) {
            f.seek(1024);
            f.write(new byte[512]);
        }
        try (SegmentedRaftStorage s = SegmentedRaftStorage.open(dir, StorageOptions.unsafeNoFsync())) {
            assertThat(s.recover().entries()).containsExactly(Entries.entry(1, 1, 100));
            assertThat(s.metrics().recordsTruncatedAtRecovery()).isEqualTo(2);
        }
    }

    @Test
    void anyDamageInAClosedSegmentIsAnError() throws IOException {
        writeLog(20);
        Path closed = dir.resolve("log_9-16.seg");
        long size = Files.size(closed);
        flip(closed, size - 1);
        assertThatThrownBy(this::open).isInstanceOf(StorageCorruptionException.class)
                .hasMessageContaining("log_9-16.seg").hasMessageContaining("closed segment");
        flip(closed, size - 1);
        SegmentedRaftStorageContractTest.cut(closed, size - RECORD);
        assertThatThrownBy(this::open).isInstanceOf(StorageCorruptionException.class)
                .hasMessageContaining("its name says 16");
    }

    @Test
    void missingSegmentIsAGapNotSilentLoss() throws IOException {
        writeLog(20);
        Files.delete(dir.resolve("log_9-16.seg"));
        assertThatThrownBy(this::open).isInstanceOf(StorageCorruptionException.class)
                .hasMessageContaining("gap");
    }

    @Test
    void aSecondOpenOfTheSameDirectoryFailsWhileTheFirstHoldsIt() {
        try (SegmentedRaftStorage s = open()) {
            assertThatThrownBy(this::open).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("in use").hasMessageContaining("lock");
        }
        open().close();
    }

    @Test
    void unfinishedTempFilesAreDeleted() throws IOException {
        writeLog(3);
        Files.write(dir.resolve("snapshot_1_3.tmp"), new byte[] {1, 2, 3});
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().snapshot()).isEmpty();
            assertThat(s.recover().entries()).isEqualTo(entries(1, 1, 3));
        }
        assertThat(dir.resolve("snapshot_1_3.tmp")).doesNotExist();
    }

    @Test
    void aCorruptSnapshotWhoseEntriesAreCompactedIsAnError() throws IOException {
        try (SegmentedRaftStorage s = open()) {
            s.append(entries(1, 1, 30));
            s.saveSnapshot(snapshot(1, 20), ByteString.copyFromUtf8("twenty"));
        }
        flip(dir.resolve("snapshot_1_20"), 25);
        assertThatThrownBy(this::open).isInstanceOf(StorageCorruptionException.class)
                .hasMessageContaining("snapshot ends at 0");
    }

    @Test
    void newestValidSnapshotIsPickedAndOlderOnesAreDeletedOnTheNextSave() throws IOException {
        try (SegmentedRaftStorage s = open()) {
            s.append(entries(1, 1, 30));
            s.saveSnapshot(snapshot(1, 5), ByteString.copyFromUtf8("five"));
            Files.copy(dir.resolve("snapshot_1_5"), dir.resolve("keep"));
            s.saveSnapshot(snapshot(1, 6), ByteString.copyFromUtf8("six"));
            assertThat(dir.resolve("snapshot_1_5")).doesNotExist();
        }
        Files.move(dir.resolve("keep"), dir.resolve("snapshot_1_5"));
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.snapshotData()).contains(ByteString.copyFromUtf8("six"));
            assertThat(s.recover().entries()).isEqualTo(entries(1, 7, 30));
            s.saveSnapshot(snapshot(1, 7), ByteString.copyFromUtf8("seven"));
        }
        assertThat(dir.resolve("snapshot_1_5")).doesNotExist();
        assertThat(dir.resolve("snapshot_1_6")).doesNotExist();
    }

    @Test
    void snapshotCompactionDeletesOnlyWhollyCoveredSegments() throws IOException {
        writeLog(20);
        try (SegmentedRaftStorage s = open()) {
            s.saveSnapshot(snapshot(1, 12), ByteString.EMPTY);
            assertThat(segmentNames()).containsExactly("log_9-16.seg", "log_inprogress_17.seg");
        }
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().entries()).isEqualTo(entries(1, 13, 20));
        }
    }

    @Test
    void aDisagreeingSnapshotKilledWhileDroppingTheLogNeverKeepsThatLogAfterIt() throws IOException {
        writeLog(20);
        // saveSnapshot((2, 8)) renamed its file and deleted the open segment, then the process died
        SnapshotFile.write(new Disk(dir, false, new Disk.Counters(), Disk.Steps.NONE), snapshot(2, 8), ByteString.EMPTY);
        Files.delete(dir.resolve("log_inprogress_17.seg"));
        try (SegmentedRaftStorage s = open()) {
            // log_1-8 is wholly covered, but it says the log disagrees: log_9-16 must go too
            assertThat(s.recover().snapshot()).contains(snapshot(2, 8));
            assertThat(s.recover().entries()).isEmpty();
        }
        assertThat(segmentNames()).isEmpty();
    }

    @Test
    void anAgreeingCompactionKilledHalfWayKeepsTheLogAfterTheSnapshot() throws IOException {
        writeLog(20);
        SnapshotFile.write(new Disk(dir, false, new Disk.Counters(), Disk.Steps.NONE), snapshot(1, 8), ByteString.EMPTY);
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().entries()).isEqualTo(entries(1, 9, 20));
        }
        assertThat(segmentNames()).containsExactly("log_9-16.seg", "log_inprogress_17.seg");
    }

    @Test
    void aTornHardStateSlotFallsBackToThePreviousState() throws IOException {
        try (SegmentedRaftStorage s = open()) {
            s.saveHardState(hardState(1, "a", 0));
            s.sync();
            s.saveHardState(hardState(2, "b", 0));
            s.sync();
        }
        // the first went to slot 0, the second to slot 1: tear it
        flip(dir.resolve(FileNames.HARD_STATE), HardStateFile.SLOT_BYTES + HardStateFile.SLOT_HEADER_BYTES + 1);
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().hardState()).isEqualTo(hardState(1, "a", 0));
            s.saveHardState(hardState(3, "c", 0));
        }
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().hardState()).isEqualTo(hardState(3, "c", 0));
        }
    }

    @Test
    void aCommitOnlyChangeIsWrittenUnforcedAndNeverOverTheForcedSlot() throws IOException {
        try (SegmentedRaftStorage s = SegmentedRaftStorage.open(dir, StorageOptions.defaults())) {
            s.saveHardState(hardState(2, "b", 0));
            s.sync();
            long forced = s.metrics().fsyncs();
            s.saveHardState(hardState(2, "b", 5));
            s.sync();
            s.saveHardState(hardState(2, "b", 7));
            s.sync();
            assertThat(s.metrics().fsyncs()).isEqualTo(forced);
            assertThat(s.metrics().syncs()).isEqualTo(3);
        }
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().hardState()).isEqualTo(hardState(2, "b", 7));
        }
        // both commit-only writes went to slot 1; a crash that tore it leaves the forced term and vote
        flip(dir.resolve(FileNames.HARD_STATE), HardStateFile.SLOT_BYTES + HardStateFile.SLOT_HEADER_BYTES);
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().hardState()).isEqualTo(hardState(2, "b", 0));
        }
    }

    @Test
    void aLogAheadOfTheHardStateRaisesTheTermWithNoVote() {
        try (SegmentedRaftStorage s = open()) {
            s.saveHardState(hardState(1, "a", 2));
            s.append(entries(1, 1, 3));
            s.sync();
            s.saveHardState(hardState(4, "b", 2));
            s.append(entries(4, 4, 5));
            // the entries reached the disk, the hard state did not: the crash hit between them
            SegmentedRaftStorage.CrashPoint point = s.abandon();
            assertThat(point.writtenBytes()).isGreaterThan(point.syncedBytes());
        }
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().entries()).isEqualTo(concat(entries(1, 1, 3), entries(4, 4, 5)));
            assertThat(s.recover().hardState()).isEqualTo(hardState(4, "", 2));
        }
    }

    @Test
    void aTornSegmentHeaderIsRewritten() throws IOException {
        try (SegmentedRaftStorage s = open()) {
            s.append(entries(1, 1, 1));
        }
        Path open = openSegment();
        SegmentedRaftStorageContractTest.cut(open, 3);
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().entries()).isEmpty();
            s.append(entries(1, 1, 2));
        }
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().entries()).isEqualTo(entries(1, 1, 2));
        }
    }

    @Test
    void aCutAcrossSegmentsIsDurableBeforeTheReplacementIsWritten() throws IOException {
        writeLog(20);
        List<LogEntryProto> replacement = entries(2, 5, 6);
        try (SegmentedRaftStorage s = open()) {
            s.append(replacement);
            // crash before any sync: the cut itself survives, the replacement records may not
            SegmentedRaftStorage.CrashPoint point = s.abandon();
            SegmentedRaftStorageContractTest.cut(point.openSegment(), point.syncedBytes());
        }
        try (SegmentedRaftStorage s = open()) {
            assertThat(s.recover().entries()).isEqualTo(entries(1, 1, 4));
        }
    }

    @Test
    void metricsCountWritesSyncsAndSegments() {
        try (SegmentedRaftStorage s = SegmentedRaftStorage.open(dir, StorageOptions.defaults().withMaxSegmentBytes(300))) {
            s.append(entries(1, 1, 20));
            s.saveHardState(hardState(1, "a", 1));
            s.sync();
            s.sync();
            StorageMetrics m = s.metrics();
            assertThat(m.syncs()).isEqualTo(1);
            assertThat(m.segmentsCreated()).isEqualTo(3);
            assertThat(m.bytesWritten()).isGreaterThan(20 * RECORD);
            assertThat(m.fsyncs()).isGreaterThan(3);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new StorageMetricsBinder(s).bindTo(registry);
            assertThat(registry.get(StorageMetricsBinder.SYNCS).functionTimer().count()).isEqualTo(1);
            assertThat(registry.get(StorageMetricsBinder.BYTES_WRITTEN).functionCounter().count())
                    .isEqualTo(m.bytesWritten());
            assertThat(registry.get(StorageMetricsBinder.SEGMENTS).gauge().value()).isEqualTo(3);
        }
    }
}
