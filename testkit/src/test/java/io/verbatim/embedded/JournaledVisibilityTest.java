package io.verbatim.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.testkit.ManualJournal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * With a journal that makes nothing durable until told (a disk that never finishes a force), nothing is
 * acknowledged and nothing is visible: no produce or ingest acknowledgement, no entry to a reader, no cursor at
 * the latest past an entry not yet durable.
 */
class JournaledVisibilityTest {
    private static final String TOPIC = "persistent://public/default/t";

    private final ManualJournal journal = new ManualJournal();
    private final MemorySegments c = new MemorySegments("east", TOPIC, Layout.initial(1, 4, 0), Schedulers.immediate(),
            journal, LedgerIds.fromFloor(100));

    private static Entry replicated(long n) {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0).build(),
                List.of(Message.of("k", ("b/" + n).getBytes(StandardCharsets.UTF_8))), CompressionType.NONE)
                .restamp(new ReplicationStamp("b", SourcePosition.of(7, n)));
    }

    @Test
    void nothingIsAcknowledgedOrReadBeforeTheJournalMadeItDurable() {
        List<StoredEntry> read = new CopyOnWriteArrayList<>();
        c.log(0).openCursor("sub", StartAt.EARLIEST).read().subscribe(read::add);
        c.produce(List.of(Message.of("k", new byte[] {1})), Compression.NONE);
        AtomicBoolean produced = new AtomicBoolean();
        c.durable().subscribe(null, null, () -> produced.set(true));
        assertThat(c.ingest(0, "pulsar.repl.b.0", c.newSessionId(), 0, SourcePosition.of(7, 0), replicated(0)))
                .isEqualTo(ProducerSession.Receipt.PERSISTED);
        AtomicBoolean ingested = new AtomicBoolean();
        c.durable().subscribe(null, null, () -> ingested.set(true)); // what the ingest endpoint waits for to reply

        assertThat(produced).as("produce acknowledged").isFalse();
        assertThat(ingested).as("ingest receipt sent").isFalse();
        assertThat(read).as("entries read").isEmpty();
        assertThat(c.log(0).entries()).isEmpty();

        journal.flush();
        assertThat(produced).isTrue();
        assertThat(ingested).isTrue();
        assertThat(read).hasSize(2);
    }

    @Test
    void aClusterWhoseJournalFailedRefusesProduceAndIngestBeforeChangingAnything() {
        AtomicReference<String> failure = new AtomicReference<>();
        Journal failing = new Journal() {
            @Override
            public long append(Record record) {
                if (failure.get() != null) {
                    throw new IllegalStateException(failure.get());
                }
                return journal.append(record);
            }

            @Override
            public Mono<Void> durable(long sequence) {
                return journal.durable(sequence);
            }

            @Override
            public long lastSequence() {
                return journal.lastSequence();
            }

            @Override
            public void onDurable(LongConsumer listener) {
                journal.onDurable(listener);
            }

            @Override
            public boolean keeps() {
                return true;
            }

            @Override
            public Optional<String> failed() {
                return Optional.ofNullable(failure.get());
            }
        };
        MemorySegments d = new MemorySegments("east", TOPIC, Layout.initial(1, 4, 0), Schedulers.immediate(), failing,
                LedgerIds.fromFloor(100));
        long session = d.newSessionId();
        d.ingest(0, "pulsar.repl.b.0", session, 0, SourcePosition.of(7, 0), replicated(0));
        journal.flush();
        ClusterImage before = d.image();
        failure.set("the journal in /data/journal failed (No space left on device)");

        Assertions.assertThatThrownBy(() -> d.produce(List.of(Message.of("k", new byte[] {1})),
                Compression.NONE)).isInstanceOf(IllegalStateException.class).hasMessageContaining("No space left");
        Assertions.assertThatThrownBy(() -> d.ingest(0, "pulsar.repl.b.0", session, 1,
                SourcePosition.of(7, 1), replicated(1))).isInstanceOfSatisfying(RemoteException.class,
                        e -> assertThat(e.kind()).isEqualTo(RemoteException.Kind.UNAVAILABLE));
        assertThat(d.image()).as("nothing changed in memory").isEqualTo(before);
    }

    @Test
    void aCursorOpenedAtTheLatestReadsTheEntriesNotYetDurable() {
        c.produce(List.of(Message.of("k", new byte[] {1})), Compression.NONE);
        journal.flush();
        c.produce(List.of(Message.of("k", new byte[] {2})), Compression.NONE); // written, not yet durable
        MemoryCursor latest = c.log(0).openCursor("late", StartAt.LATEST);
        assertThat(latest.markDeleteIndex()).as("after the last visible entry").isZero();
        List<StoredEntry> read = new CopyOnWriteArrayList<>();
        latest.read().subscribe(read::add);
        journal.flush();
        assertThat(read).hasSize(1);
        assertThat(read.get(0).position().entryId()).isEqualTo(1);
    }
}
