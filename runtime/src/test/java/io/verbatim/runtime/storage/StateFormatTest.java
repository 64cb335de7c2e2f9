package io.verbatim.runtime.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
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
import io.verbatim.runtime.proto.EntriesChunk;
import io.verbatim.runtime.proto.SegmentImage;
import io.verbatim.runtime.proto.StateFooter;
import io.verbatim.runtime.proto.StateHeader;
import io.verbatim.runtime.proto.StateRecord;
import io.verbatim.runtime.proto.TopicImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.scheduler.Schedulers;

/** A cluster's state through the bytes a node writes at a clean stop, and what a reader refuses. */
class StateFormatTest {
    private static final String TOPIC = "persistent://public/default/t";

    @TempDir
    Path dir;

    /** A topic that split, with entries of its own, a replicated entry, cursors partly acknowledged. */
    private static MemorySegments busy() {
        MemorySegments c = new MemorySegments("a", TOPIC, Layout.initial(1, 4, 0), Schedulers.immediate());
        c.replicateTo("b", StartAt.EARLIEST);
        for (int i = 0; i < 30; i++) {
            c.produce(List.of(Message.of("k" + i, ("a/" + i).getBytes(StandardCharsets.UTF_8))), Compression.LZ4);
        }
        c.apply(new Mutation.Split(0)).layoutOrThrow();
        c.produce(List.of(Message.of("k1", "a/30".getBytes(StandardCharsets.UTF_8))), Compression.NONE);
        c.log(0).existingCursor("pulsar.repl.b").orElseThrow().acknowledge(SourcePosition.of(0, 11)).block();
        var replicated = replicated();
        long child = c.layout().activeSegmentFor(Message.of("k2", new byte[0]).routingHash().orElseThrow().segmentHash()).id();
        assertThat(c.ingest(child, "pulsar.repl.b.7", c.newSessionId(), 0, SourcePosition.of(7, 3), replicated))
                .isEqualTo(ProducerSession.Receipt.PERSISTED);
        return c;
    }

    private static Entry replicated() {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(0).setPublishTime(1).build(),
                List.of(Message.of("k2", "b/0".getBytes(StandardCharsets.UTF_8))), CompressionType.NONE)
                .restamp(new ReplicationStamp("b", SourcePosition.of(7, 3)));
    }

    @Test
    void anImageReadBackRestoresEntriesCursorsAndDeduplication() throws IOException {
        MemorySegments before = busy();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StateFormat.write(out, "a", Map.of(TOPIC, before.image()), 42);
        ClusterImage image = StateFormat.read(new ByteArrayInputStream(out.toByteArray()), "a").get(TOPIC);
        MemorySegments after = MemorySegments.restore("a", TOPIC, image, Schedulers.immediate());

        assertThat(after.layout()).isEqualTo(before.layout());
        assertThat(bytes(after.contents())).isEqualTo(bytes(before.contents()));
        assertThat(after.log(0).isSealed()).isTrue();
        assertThat(after.log(0).existingCursor("pulsar.repl.b").orElseThrow().markDeleteIndex()).isEqualTo(11);
        assertThat(after.backlog(0, "pulsar.repl.b")).isEqualTo(before.backlog(0, "pulsar.repl.b"));
        // The destination side remembers what it stored: a repeat is a duplicate, and a session opened after
        // the restart fences the ones before it.
        long session = after.newSessionId();
        assertThat(session).isGreaterThan(before.newSessionId() - 1);
        long replicatedTo = Long.parseLong(before.image().destinations().keySet().iterator().next().split("/")[0]);
        var repeat = replicated();
        assertThat(after.ingest(replicatedTo, "pulsar.repl.b.7", session, 0, SourcePosition.of(7, 3), repeat))
                .isEqualTo(ProducerSession.Receipt.DUPLICATE);
    }

    private static Map<Long, List<String>> bytes(Map<Long, List<StoredEntry>> contents) {
        Map<Long, List<String>> out = new TreeMap<>();
        contents.forEach((id, entries) -> out.put(id, entries.stream().map(e -> e.position() + "=" + Arrays.toString(
                toArray(e))).toList()));
        return out;
    }

    private static byte[] toArray(StoredEntry e) {
        byte[] b = new byte[e.bytes().remaining()];
        e.bytes().duplicate().get(b);
        return b;
    }

    @Test
    void aTruncatedImageIsRefusedNotHalfRead() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StateFormat.write(out, "a", Map.of(TOPIC, busy().image()), 42);
        byte[] whole = out.toByteArray();
        for (int cut : new int[] {whole.length - 1, whole.length / 2, 3}) {
            byte[] part = Arrays.copyOf(whole, cut);
            assertThatThrownBy(() -> StateFormat.read(new ByteArrayInputStream(part), "a"))
                    .as("cut at %d of %d", cut, whole.length).isInstanceOf(IOException.class);
        }
    }

    @Test
    void anotherClustersImageIsRefused() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StateFormat.write(out, "a", Map.of(TOPIC, busy().image()), 42);
        assertThatThrownBy(() -> StateFormat.read(new ByteArrayInputStream(out.toByteArray()), "b"))
                .hasMessageContaining("cluster a's, not b's");
    }

    @Test
    void anImageOfTheFirstFormatIsReadWithOneLedgerPerSegmentNumberedAsTheSegment() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StateRecord.newBuilder().setHeader(StateHeader.newBuilder()
                .setFormat(1).setCluster("a").setWrittenAtMs(42)).build().writeDelimitedTo(out);
        Layout layout = Layout.initial(1, 4, 0);
        StateRecord.newBuilder().setTopic(TopicImage.newBuilder()
                .setTopic(TOPIC).setLayout(LayoutRecords.toProto(TOPIC, layout, List.of())).setSessionIds(3))
                .build().writeDelimitedTo(out);
        StateRecord.newBuilder().setSegment(SegmentImage.newBuilder()
                .setSegmentId(0).setFirstEntryId(2).putCursors("pulsar.repl.b", 2)).build().writeDelimitedTo(out);
        byte[] entry = Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(0).setPublishTime(1)
                .build(), List.of(Message.of("k", new byte[] {1})), CompressionType.NONE).toByteArray();
        StateRecord.newBuilder().setEntries(EntriesChunk.newBuilder()
                .addEntries(ByteString.copyFrom(entry))).build().writeDelimitedTo(out);
        StateRecord.newBuilder().setFooter(StateFooter.newBuilder()
                .setRecords(4)).build().writeDelimitedTo(out);

        StateFormat.Checkpoint read = StateFormat.readCheckpoint(new ByteArrayInputStream(out.toByteArray()), "a");
        ClusterImage.SegmentImage segment = read.images().get(TOPIC).segments().get(0);
        assertThat(segment.ledgers()).containsExactly(new ClusterImage.Ledger(0, 0));
        MemorySegments restored = MemorySegments.restore("a", TOPIC, read.images().get(TOPIC), Schedulers.immediate());
        assertThat(restored.log(0).entries()).extracting(StoredEntry::position).containsExactly(SourcePosition.of(0, 2));
        assertThat(read.nextLedgerId()).isZero();
        assertThat(read.journalSequences()).containsEntry(TOPIC, 0L);
    }

    @Test
    void aCheckpointKeepsLedgersJournalSequencesAndCounters() throws IOException {
        MemorySegments before = busy();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StateFormat.write(out, "a", new StateFormat.Checkpoint(Map.of(TOPIC, before.image()), Map.of(TOPIC, 77L), 1234,
                78), 42);
        StateFormat.Checkpoint read = StateFormat.readCheckpoint(new ByteArrayInputStream(out.toByteArray()), "a");
        assertThat(read.journalSequences()).containsExactly(Map.entry(TOPIC, 77L));
        assertThat(read.nextLedgerId()).isEqualTo(1234);
        assertThat(read.nextJournalSequence()).isEqualTo(78);
        assertThat(read.images().get(TOPIC).segments()).extracting(ClusterImage.SegmentImage::ledgers)
                .isEqualTo(before.image().segments().stream().map(ClusterImage.SegmentImage::ledgers).toList());
    }
}
