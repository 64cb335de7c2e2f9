package io.verbatim.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * A cluster that stops hands back its image and stores nothing after it: what a peer's session still
 * delivers is refused as unavailable (sent again after the restart), never stored — and acknowledged —
 * behind the image a restart starts from.
 */
class MemorySegmentsStopTest {
    private static Entry replicated(long n) {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0).build(),
                List.of(Message.of("k", ("b/" + n).getBytes(StandardCharsets.UTF_8))), CompressionType.NONE)
                .restamp(new ReplicationStamp("b", SourcePosition.of(0, n)));
    }

    @Test
    void aStoppedClusterStoresNothingAfterItsImage() {
        MemorySegments c = new MemorySegments("a", Layout.initial(1, 1, 0), Schedulers.immediate());
        long session = c.newSessionId();
        assertThat(c.ingest(0, "pulsar.repl.b.0", session, 0, SourcePosition.of(0, 0), replicated(0)))
                .isEqualTo(ProducerSession.Receipt.PERSISTED);

        ClusterImage image = c.stop();
        assertThat(c.isStopped()).isTrue();
        assertThat(image.segments().get(0).entries()).hasSize(1);

        assertThatThrownBy(() -> c.ingest(0, "pulsar.repl.b.0", session, 1, SourcePosition.of(0, 1), replicated(1)))
                .isInstanceOfSatisfying(RemoteException.class,
                        e -> assertThat(e.kind()).isEqualTo(RemoteException.Kind.UNAVAILABLE))
                .hasMessageContaining("stopping");
        assertThatThrownBy(() -> c.produce(List.of(Message.of("k", new byte[1])), Compression.NONE))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("stopped");
        assertThat(c.contents().get(0L)).as("nothing stored after the image").hasSize(1);
    }
}
