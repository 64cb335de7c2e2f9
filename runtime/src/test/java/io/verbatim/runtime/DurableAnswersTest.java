package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.embedded.LedgerIds;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import io.verbatim.testkit.ManualJournal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/** What the runtime answers for the embedded storage (a produce, a dedup reset) it answers once durable. */
class DurableAnswersTest {
    private static final String TOPIC = "persistent://public/default/t";

    private final ManualJournal journal = new ManualJournal();
    private final MemorySegments cluster = new MemorySegments("east", TOPIC, Layout.initial(1, 4, 0),
            Schedulers.immediate(), journal, LedgerIds.fromFloor(100));

    private static Entry replicated(long n) {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0).build(),
                List.of(Message.of("k", ("b/" + n).getBytes(StandardCharsets.UTF_8))), CompressionType.NONE)
                .restamp(new ReplicationStamp("b", SourcePosition.of(7, n)));
    }

    @Test
    void aProduceIsAnsweredOnlyOnceDurable() {
        AtomicReference<List<SourcePosition>> answered = new AtomicReference<>();
        new MemoryTopicStorage(cluster).produce(List.of(Message.of("k", new byte[] {1})), Compression.NONE)
                .subscribe(answered::set);
        assertThat(answered.get()).isNull();
        journal.flush();
        assertThat(answered.get()).hasSize(1);
    }

    @Test
    void aDedupResetIsAnsweredOnlyOnceDurable() {
        cluster.ingest(0, "pulsar.repl.b.0", cluster.newSessionId(), 0, SourcePosition.of(7, 0), replicated(0));
        journal.flush();
        AtomicReference<Boolean> answered = new AtomicReference<>();
        TopicsApi.resetDurably(cluster, 0, "pulsar.repl.b.0").subscribe(answered::set);
        assertThat(answered.get()).as("answered before the reset was durable").isNull();
        journal.flush();
        assertThat(answered.get()).isTrue();
        TopicsApi.resetDurably(cluster, 0, "pulsar.repl.b.0").subscribe(answered::set);
        assertThat(answered.get()).as("no mark left").isFalse();
    }
}
