package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Garbage collection's part on the broker: a sealed segment counts drained only once every subscription's
 * mark-delete position is at its last entry, and a layout that no longer holds it deletes its topic.
 */
class PulsarSegmentsGcTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static int run;
    private PulsarFixture east;
    private PulsarProducer producer;

    @AfterEach
    void close() {
        if (producer != null) {
            producer.close();
        }
        if (east != null) {
            east.close();
        }
    }

    @Test
    void aSealedSegmentIsDrainedOnlyOnceEverySubscriptionReadItAndAPrunedOneLosesItsTopic() throws Exception {
        east = new PulsarFixture("public/gc-east-" + ++run);
        String topic = east.newTopic("gc");
        PulsarSegments segments = PulsarSegments.open(east.storage, topic, List.of("west"), Layout.initial(1, 4, 0),
                Schedulers.parallel(), Duration.ofMillis(100)).block(WAIT);
        producer = new PulsarProducer(east.storage, segments, "app-gc-" + run);
        producer.produce(List.of(Message.of("k", "one".getBytes(StandardCharsets.UTF_8))), Compression.NONE)
                .block(WAIT); // one entry
        Segment zero = segments.layout().segment(0).orElseThrow();
        String name = east.storage.segmentTopic(topic, zero);

        Layout split = next(segments.layout(), Mutation.split(0));
        assertThat(segments.adopt(split).block(WAIT)).isTrue();
        Segment sealed = segments.layout().segment(0).orElseThrow();
        assertThat(segments.drainedByAll(sealed).block(WAIT)).as("west's cursor has not read it").isFalse();

        ReplicationCursor west = east.storage.log(topic, sealed)
                .cursor(ReplicatorConfig.cursorName("west"), StartAt.EARLIEST).block(WAIT);
        List<StoredEntry> read = west.read().take(1).collectList().block(WAIT);
        west.acknowledge(read.get(0).position()).block(WAIT);
        // a second subscription that has read nothing keeps it
        ReplicationCursor other = east.storage.log(topic, sealed).cursor("billing", StartAt.EARLIEST).block(WAIT);
        assertThat(segments.drainedByAll(sealed).block(WAIT)).as("billing has not read it").isFalse();
        List<StoredEntry> all = other.read().take(1).collectList().block(WAIT);
        other.acknowledge(all.get(0).position()).block(WAIT);
        assertThat(segments.drainedByAll(sealed).block(WAIT)).as("every subscription at the last entry").isTrue();

        assertThat(east.storage.admin().topics().getList(east.namespace)).contains(name);
        Layout pruned = next(segments.layout(), Mutation.prune(0));
        assertThat(segments.adopt(pruned).block(WAIT)).isTrue();
        assertThat(east.storage.admin().topics().getList(east.namespace)).as("deleted").doesNotContain(name);
        assertThat(segments.layout().segment(0)).isEmpty();
        // deleting what is gone already is done
        east.storage.deleteSegment(topic, sealed).block(WAIT);
    }

    /**
     * A produce call whose sends a seal refused reads the sealed topic to learn what it stored of them; garbage
     * collection deleting the topic under it left the call unable to tell (PulsarGcTest: the call failed, its messages'
     * fate unknown). A held topic is deleted only once the call lets it go.
     */
    @Test
    void aTopicAProduceCallHoldsIsDeletedOnlyOnceTheCallLetsItGo() throws Exception {
        east = new PulsarFixture("public/gc-hold-" + ++run);
        String topic = east.newTopic("held");
        PulsarSegments segments = PulsarSegments.open(east.storage, topic, List.of("west"), Layout.initial(1, 4, 0),
                Schedulers.parallel(), Duration.ofMillis(100)).block(WAIT);
        Segment zero = segments.layout().segment(0).orElseThrow();
        String name = east.storage.segmentTopic(topic, zero);
        Runnable release = east.storage.hold(name);
        CompletableFuture<Void> deleted = east.storage.deleteSegment(topic, zero).toFuture();
        Mono.delay(Duration.ofMillis(500)).block(WAIT);
        assertThat(deleted).as("held").isNotDone();
        assertThat(east.storage.admin().topics().getList(east.namespace)).contains(name);
        release.run();
        release.run(); // once only: a second release does not let another holder's hold go
        deleted.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(east.storage.admin().topics().getList(east.namespace)).as("deleted").doesNotContain(name);
    }

    private static Layout next(Layout current, Mutation m) {
        return current.apply(m, current.epoch(), System.currentTimeMillis()).layoutOrThrow();
    }
}
