package io.verbatim.runtime.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.StorageConfig;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The embedded storage in a data directory: what it acknowledged is there after any stop, clean or not, from
 * the checkpoint and the journal after it; a torn tail is cut off; a restart never reuses a source position;
 * a topic whose layout moved on while it was down is brought to the metadata log's layout with its entries.
 */
class LocalStorageTest {
    private static final String TOPIC = "persistent://public/default/t";

    @TempDir
    Path dir;

    private final Scheduler timer = Schedulers.newSingle("local-storage-test");
    private final List<LocalStorage> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(LocalStorage::close);
        timer.dispose();
    }

    private LocalStorage open() {
        return open(StorageConfig.defaults());
    }

    private LocalStorage open(StorageConfig config) {
        LocalStorage s = LocalStorage.open("a", dir, config, timer);
        opened.add(s);
        return s;
    }

    /** Produces and waits for the acknowledgement, as the produce endpoint does. */
    private static List<SourcePosition> produce(MemorySegments c, int from, int count) {
        List<Message> messages = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            messages.add(Message.of("k" + i % 7, ("a/" + i).getBytes(StandardCharsets.UTF_8)));
        }
        List<SourcePosition> written = c.produce(messages, Compression.LZ4);
        c.durable().block(Duration.ofSeconds(10));
        return written;
    }

    private static Entry replicated(long entryId) {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(entryId).setPublishTime(1)
                .build(), List.of(Message.of("k2", ("b/" + entryId).getBytes(StandardCharsets.UTF_8))), CompressionType.NONE)
                .restamp(new ReplicationStamp("b", SourcePosition.of(9, entryId)));
    }

    /** Every message stored, by segment, in order. */
    private static Map<Long, List<String>> payloads(MemorySegments c) {
        Map<Long, List<String>> out = new TreeMap<>();
        c.contents().forEach((segment, entries) -> {
            List<String> list = new ArrayList<>();
            for (StoredEntry e : entries) {
                Entries.messages(Entry.parse(e.bytes())).forEach(m -> list.add(new String(m.payloadBytes(),
                        StandardCharsets.UTF_8)));
            }
            out.put(segment, list);
        });
        return out;
    }

    @Test
    void whatWasAcknowledgedIsThereAfterARunThatDidNotStopCleanly() {
        LocalStorage first = open();
        MemorySegments a = first.openTopic(TOPIC, Layout.initial(2, 4, 0));
        a.replicateTo("b", StartAt.EARLIEST);
        List<SourcePosition> written = produce(a, 0, 50);
        long session = a.newSessionId();
        long segment = a.layout().activeSegments().get(0).id();
        for (int i = 0; i < 5; i++) {
            assertThat(a.ingest(segment, "pulsar.repl.b.3", session, i, SourcePosition.of(9, i), replicated(i)))
                    .isEqualTo(ProducerSession.Receipt.PERSISTED);
        }
        a.durable().block(Duration.ofSeconds(10));
        a.log(segment).existingCursor("pulsar.repl.b").orElseThrow()
                .acknowledge(a.log(segment).entries().get(3).position()).block();
        Map<Long, List<String>> before = payloads(a);
        first.close(); // not a clean stop: no checkpoint, the journal as it is

        LocalStorage second = open();
        assertThat(second.uncleanStop()).isTrue();
        assertThat(second.describe()).contains("did not stop cleanly").contains("journal record");
        MemorySegments b = second.openTopic(TOPIC, Layout.initial(2, 4, 0));
        assertThat(payloads(b)).isEqualTo(before);
        assertThat(b.log(segment).existingCursor("pulsar.repl.b").orElseThrow().markDeleteIndex()).isEqualTo(3);
        assertThat(b.ingest(segment, "pulsar.repl.b.3", b.newSessionId(), 0, SourcePosition.of(9, 4), replicated(4)))
                .as("the deduplication mark came back").isEqualTo(ProducerSession.Receipt.DUPLICATE);
        List<SourcePosition> after = produce(b, 50, 20);
        for (SourcePosition p : after) {
            assertThat(written).allSatisfy(w -> assertThat(p.ledgerId()).isGreaterThan(w.ledgerId()));
        }
    }

    @Test
    void theIssuesSequenceOfCleanAndUncleanRestartsReusesNoPosition() {
        // east produces m0 m1, stops cleanly, restarts, produces m2 m3, is killed, restarts, produces m4 m5
        LocalStorage run1 = open();
        MemorySegments c1 = run1.openTopic(TOPIC, Layout.initial(1, 4, 0));
        List<SourcePosition> positions = new ArrayList<>(produce(c1, 0, 1));
        positions.addAll(produce(c1, 1, 1));
        run1.stopCleanly(Map.of(TOPIC, c1.stop()));
        LocalStorage run2 = open();
        assertThat(run2.uncleanStop()).isFalse();
        MemorySegments c2 = run2.openTopic(TOPIC, Layout.initial(1, 4, 0));
        positions.addAll(produce(c2, 2, 1));
        positions.addAll(produce(c2, 3, 1));
        run2.close();
        LocalStorage run3 = open();
        MemorySegments c3 = run3.openTopic(TOPIC, Layout.initial(1, 4, 0));
        positions.addAll(produce(c3, 4, 1));
        positions.addAll(produce(c3, 5, 1));
        assertThat(positions).doesNotHaveDuplicates().isSorted();
        assertThat(payloads(c3).get(0L)).containsExactly("a/0", "a/1", "a/2", "a/3", "a/4", "a/5");
        assertThat(c3.log(0).entries()).extracting(StoredEntry::position).containsExactlyElementsOf(positions);
    }

    @Test
    void aTopicWhoseLayoutMovedOnWhileItWasDownKeepsItsEntries() {
        LocalStorage run1 = open();
        MemorySegments c1 = run1.openTopic(TOPIC, Layout.initial(1, 4, 0));
        produce(c1, 0, 30);
        run1.stopCleanly(Map.of(TOPIC, c1.stop()));

        LocalStorage run2 = open();
        MemorySegments c2 = run2.openTopic(TOPIC, Layout.initial(1, 4, 0));
        c2.apply(Mutation.split(0)).layoutOrThrow(); // the split between the clean stop and the crash
        produce(c2, 30, 30);
        Layout split = c2.layout();
        Map<Long, List<String>> before = payloads(c2);
        run2.close();

        // the metadata log moved on again meanwhile (a peer's split of a child): epoch 2
        Layout held = split.apply(Mutation.split(split.activeSegments().get(0).id()), split.epoch(), 0).layoutOrThrow();
        LocalStorage run3 = open();
        MemorySegments c3 = run3.openTopic(TOPIC, held);
        assertThat(c3.layout()).isEqualTo(held);
        Map<Long, List<String>> after = payloads(c3);
        before.forEach((segment, messages) -> assertThat(after.get(segment)).as("segment %s", segment)
                .isEqualTo(messages));
        assertThat(after.values().stream().mapToInt(List::size).sum()).isEqualTo(60);
    }

    @Test
    void aCheckpointReplacesTheJournalBeforeItAndARestartReadsBoth() throws IOException {
        LocalStorage first = open(StorageConfig.defaults().withJournal(new StorageConfig.Flush.PerBatch(),
                StorageConfig.MIN_CHECKPOINT_BYTES));
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        byte[] payload = new byte[4096];
        for (int i = 0; i < 600; i++) { // 2.4 MB: more than one checkpoint's worth
            c.produce(List.of(Message.of("k", payload)), Compression.NONE);
        }
        c.durable().block(Duration.ofSeconds(10));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!Files.exists(dir.resolve(LocalStorage.STATE)) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(dir.resolve(LocalStorage.STATE)).exists();
        produce(c, 0, 10);
        first.close();

        LocalStorage second = open();
        MemorySegments again = second.openTopic(TOPIC, Layout.initial(1, 4, 0));
        assertThat(payloads(again).get(0L)).hasSize(610);
        assertThat(second.describe()).contains("1 topic(s) from the checkpoint");
    }

    @Test
    void aCheckpointBeforeEveryRecoveredTopicWasOpenedKeepsTheUnopenedOnes() {
        String other = "persistent://public/default/u";
        LocalStorage first = open();
        produce(first.openTopic(TOPIC, Layout.initial(1, 4, 0)), 0, 5);
        MemorySegments u = first.openTopic(other, Layout.initial(1, 4, 0));
        for (int i = 0; i < 7; i++) {
            produce(u, i, 1);
        }
        u.log(0).openCursor("sub", StartAt.EARLIEST).acknowledge(u.log(0).entries().get(2).position()).block();
        first.close(); // killed: both topics are in the journal only

        LocalStorage second = open();
        produce(second.openTopic(TOPIC, Layout.initial(1, 4, 0)), 5, 5);
        second.checkpoint(); // before the other topic was opened: its journal files go
        MemorySegments again = second.openTopic(other, Layout.initial(1, 4, 0));
        assertThat(payloads(again).get(0L)).hasSize(7);
        assertThat(again.log(0).existingCursor("sub").orElseThrow().markDeleteIndex()).isEqualTo(2);
        produce(again, 7, 1);
        second.close(); // killed again

        LocalStorage third = open();
        assertThat(payloads(third.openTopic(other, Layout.initial(1, 4, 0))).get(0L)).hasSize(8);
        assertThat(payloads(third.openTopic(TOPIC, Layout.initial(1, 4, 0))).get(0L)).hasSize(10);
    }

    @Test
    void aCheckpointAfterEveryConfiguredTopicWasOpenedDropsTheUnconfiguredOnes() {
        String other = "persistent://public/default/u";
        LocalStorage first = open();
        produce(first.openTopic(other, Layout.initial(1, 4, 0)), 0, 3);
        first.close();
        LocalStorage second = open();
        second.openTopic(TOPIC, Layout.initial(1, 4, 0));
        second.configuredTopicsOpened();
        assertThat(second.unopened()).containsExactly(other);
        second.checkpoint();
        second.close();
        assertThat(open().unopened()).containsExactly(TOPIC);
    }

    @Test
    void aCheckpointNamingRecordsTheJournalLostSurvivesARestartAndTheNextOne() throws IOException {
        LocalStorage first = open();
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        produce(c, 0, 10);
        first.checkpoint();
        produce(c, 10, 5);
        first.close();
        // what a crash of the machine under storage.flush never or an interval can leave: the checkpoint (forced)
        // names journal records that never reached the disk
        StateFormat.Checkpoint kept;
        try (var in = Files.newInputStream(dir.resolve(LocalStorage.STATE))) {
            kept = StateFormat.readCheckpoint(in, "a");
        }
        long next = kept.nextJournalSequence() + 50;
        Disk.replace(dir.resolve(LocalStorage.STATE), out -> StateFormat.write(out, "a", new StateFormat.Checkpoint(
                kept.images(), Map.of(TOPIC, next - 1), kept.nextLedgerId(), next), 0));

        LocalStorage second = open();
        MemorySegments again = second.openTopic(TOPIC, Layout.initial(1, 4, 0));
        assertThat(payloads(again).get(0L)).hasSize(10);
        produce(again, 15, 3);
        second.close();

        LocalStorage third = open(); // its journal starts past a gap the checkpoint covers
        assertThat(payloads(third.openTopic(TOPIC, Layout.initial(1, 4, 0))).get(0L)).hasSize(13);
    }

    @Test
    void aJournalFileMissingPastTheCheckpointIsRefusedNamingTheFile() throws IOException {
        LocalStorage first = open(); // journal file 1
        produce(first.openTopic(TOPIC, Layout.initial(1, 4, 0)), 0, 3);
        first.close();
        LocalStorage second = open(); // file 2
        produce(second.openTopic(TOPIC, Layout.initial(1, 4, 0)), 3, 3);
        second.close();
        LocalStorage third = open(); // file 3
        produce(third.openTopic(TOPIC, Layout.initial(1, 4, 0)), 6, 3);
        third.close();
        List<Path> files;
        try (Stream<Path> journal = Files.list(dir.resolve(LocalStorage.JOURNAL))) {
            files = journal.filter(p -> p.toString().endsWith(FileJournal.SUFFIX)).sorted().toList();
        }
        assertThat(files).hasSize(3);
        Files.delete(files.get(1));
        assertThatThrownBy(this::open).hasMessageContaining(files.get(2).toString())
                .hasMessageContaining("a journal file is missing");
    }

    @Test
    void aConsumerThatProducesAndWaitsForItsAcknowledgementInItsHandlerCompletes() throws InterruptedException {
        LocalStorage storage = open(); // the journal forces every batch
        MemorySegments in = storage.openTopic(TOPIC, Layout.initial(1, 4, 0));
        MemorySegments out = storage.openTopic("persistent://public/default/out", Layout.initial(1, 4, 0));
        CountDownLatch piped = new CountDownLatch(3);
        List<String> threads = new CopyOnWriteArrayList<>();
        in.log(0).openCursor("pipe", StartAt.EARLIEST).read().subscribe(e -> {
            threads.add(Thread.currentThread().getName());
            new MemoryTopicStorage(out).produceNow(List.of(Message.of("k", new byte[] {1})), Compression.NONE);
            piped.countDown();
        }, error -> threads.add("failed: " + error));
        for (int i = 0; i < 3; i++) {
            produce(in, i, 1);
        }
        assertThat(piped.await(10, TimeUnit.SECONDS)).as("every entry piped: %s", threads)
                .isTrue();
        assertThat(threads).noneMatch(t -> t.contains("notify"));
        assertThat(out.log(0).entries()).hasSize(3);
        produce(in, 3, 1); // and the journal still acknowledges
    }

    @Test
    void aCheckpointDueAfterTheCleanStopWroteItsOwnLeavesTheStateFileAlone() throws IOException {
        LocalStorage first = open();
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        produce(c, 0, 10);
        first.stopCleanly(Map.of(TOPIC, c.stop()));
        byte[] written = Files.readAllBytes(dir.resolve(LocalStorage.STATE));
        first.checkpoint(); // one the journal asked for just before the stop, run late
        assertThat(Files.readAllBytes(dir.resolve(LocalStorage.STATE))).isEqualTo(written);
    }

    @Test
    void aSecondNodeOnTheSameDataDirectoryIsRefusedNamingIt() {
        LocalStorage first = open();
        produce(first.openTopic(TOPIC, Layout.initial(1, 4, 0)), 0, 3);
        assertThatThrownBy(this::open).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(dir.toString()).hasMessageContaining("in use by another node");
        first.close();
        assertThat(payloads(open().openTopic(TOPIC, Layout.initial(1, 4, 0))).get(0L)).hasSize(3);
    }

    @Test
    void aCleanStopLeavesTheCheckpointAloneAndNoMarker() throws IOException {
        LocalStorage first = open();
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        produce(c, 0, 10);
        first.stopCleanly(Map.of(TOPIC, c.stop()));
        try (Stream<Path> journal = Files.list(dir.resolve(LocalStorage.JOURNAL))) {
            assertThat(journal).isEmpty();
        }
        assertThat(dir.resolve(LocalStorage.RUNNING)).doesNotExist();
        LocalStorage second = open();
        assertThat(second.uncleanStop()).isFalse();
        assertThat(payloads(second.openTopic(TOPIC, Layout.initial(1, 4, 0))).get(0L)).hasSize(10);
    }

    @Test
    void aTornTailIsCutOffAndEveryWholeRecordBeforeItKept() throws IOException {
        LocalStorage first = open();
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        for (int i = 0; i < 20; i++) {
            produce(c, i, 1);
        }
        first.close();
        Path file;
        try (Stream<Path> journal = Files.list(dir.resolve(LocalStorage.JOURNAL))) {
            file = journal.filter(p -> p.toString().endsWith(FileJournal.SUFFIX)).max(Path::compareTo).orElseThrow();
        }
        long size = Files.size(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(size - 5); // the last record written in part
        }
        LocalStorage second = open();
        assertThat(second.describe()).contains("torn tail");
        MemorySegments again = second.openTopic(TOPIC, Layout.initial(1, 4, 0));
        assertThat(again.log(0).size()).isBetween(18L, 20L);
        assertThat(Files.size(file)).as("cut to its last whole record").isLessThan(size - 5);
        produce(again, 100, 1); // and it writes on
    }

    private Path lastJournalFile() throws IOException {
        try (Stream<Path> journal = Files.list(dir.resolve(LocalStorage.JOURNAL))) {
            return journal.filter(p -> p.toString().endsWith(FileJournal.SUFFIX)).max(Path::compareTo).orElseThrow();
        }
    }

    @Test
    void aTailOfZerosIsATornTailCutOffAndTheJournalWritesOn() throws IOException {
        LocalStorage first = open();
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        for (int i = 0; i < 5; i++) {
            produce(c, i, 1);
        }
        first.close();
        Path file = lastJournalFile();
        long size = Files.size(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.allocate(4096)); // the file grew, its bytes never reached the disk
        }
        LocalStorage second = open();
        assertThat(second.describe()).contains("torn tail of 4096 byte(s)");
        assertThat(Files.size(file)).isEqualTo(size);
        MemorySegments again = second.openTopic(TOPIC, Layout.initial(1, 4, 0));
        assertThat(payloads(again).get(0L)).hasSize(5);
        produce(again, 5, 1);
        second.close();
        assertThat(payloads(open().openTopic(TOPIC, Layout.initial(1, 4, 0))).get(0L)).hasSize(6);
    }

    @Test
    void zerosInTheMiddleOfTheLastFileAreDamageNamingTheFileAndTheOffset() throws IOException {
        LocalStorage first = open();
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        for (int i = 0; i < 5; i++) {
            produce(c, i, 1);
        }
        first.close();
        Path file = lastJournalFile();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8), 0); // the first record's length and CRC zeroed
        }
        assertThatThrownBy(this::open).hasMessageContaining(file.toString()).hasMessageContaining("damaged")
                .hasMessageContaining("at byte 0");
    }

    @Test
    void aBadRecordInTheMiddleOfTheLastFileIsDamageNotATornTail() throws IOException {
        LocalStorage first = open();
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        for (int i = 0; i < 20; i++) {
            produce(c, i, 1);
        }
        first.close();
        Path file = lastJournalFile();
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 0x5a;
        Files.write(file, bytes);
        assertThatThrownBy(this::open).hasMessageContaining(file.toString()).hasMessageContaining("damaged");
        assertThat(Files.readAllBytes(file)).as("nothing cut").isEqualTo(bytes);
    }

    @Test
    void damageBeforeTheLastRecordsIsRefusedNamingTheFile() throws IOException {
        LocalStorage first = open(StorageConfig.defaults().withJournal(new StorageConfig.Flush.PerBatch(),
                StorageConfig.MIN_CHECKPOINT_BYTES));
        MemorySegments c = first.openTopic(TOPIC, Layout.initial(1, 4, 0));
        produce(c, 0, 5);
        first.close();
        LocalStorage second = open(); // a second file: the first run's is no longer the last
        produce(second.openTopic(TOPIC, Layout.initial(1, 4, 0)), 5, 5);
        second.close();
        Path oldest;
        try (Stream<Path> journal = Files.list(dir.resolve(LocalStorage.JOURNAL))) {
            oldest = journal.filter(p -> p.toString().endsWith(FileJournal.SUFFIX)).min(Path::compareTo).orElseThrow();
        }
        byte[] bytes = Files.readAllBytes(oldest);
        bytes[bytes.length / 2] ^= 0x5a;
        Files.write(oldest, bytes);
        assertThatThrownBy(this::open).hasMessageContaining(oldest.toString()).hasMessageContaining("damaged");
    }

    @Test
    void memoryOnlyNumbersLedgersFromTheClockAndSaysItKeepsNothing() {
        LocalStorage memory = LocalStorage.memoryOnly("a", timer);
        opened.add(memory);
        assertThat(memory.durable()).isFalse();
        assertThat(memory.describe()).contains("in memory only");
        MemorySegments c = memory.openTopic(TOPIC, Layout.initial(1, 4, 0));
        SourcePosition p = c.produce(List.of(Message.of("k", new byte[1])), Compression.NONE).get(0);
        assertThat(p.ledgerId()).isGreaterThanOrEqualTo(LocalStorage.clockFloor(timer) - 60_000);
        ClusterImage image = c.image();
        assertThat(image.segments().get(0).ledgers().get(0).ledgerId()).isEqualTo(p.ledgerId());
    }

    /**
     * Ledger ids count 2^10 a millisecond from the clock: a memory-only node that handed out 2,000 ledgers (as many
     * topics made at start) and was restarted half a second later hands out none of them again. Counted one a
     * millisecond, the second run's first 1,500 would have been the first run's.
     */
    @Test
    void aMemoryOnlyRestartRightAfterHandingOutManyLedgersReusesNone() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        clock.advanceTimeTo(Instant.parse("2026-12-03T06:00:00Z"));
        LocalStorage first = LocalStorage.memoryOnly("a", clock);
        opened.add(first);
        long highest = -1;
        for (int i = 0; i < 2_000; i++) {
            highest = Math.max(highest, firstLedger(first.openTopic(TOPIC + "-" + i, Layout.initial(1, 4, 0))));
        }
        clock.advanceTimeBy(Duration.ofMillis(500));
        LocalStorage second = LocalStorage.memoryOnly("a", clock);
        opened.add(second);
        assertThat(firstLedger(second.openTopic(TOPIC, Layout.initial(1, 4, 0)))).isGreaterThan(highest);
    }

    private static long firstLedger(MemorySegments c) {
        return c.image().segments().get(0).ledgers().get(0).ledgerId();
    }
}
