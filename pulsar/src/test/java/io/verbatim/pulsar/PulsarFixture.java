package io.verbatim.pulsar;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.pulsar.broker.TestBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.MessageIdImpl;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;

/**
 * A {@link PulsarStorage} on the test JVM's broker (a child process), in a namespace of its own with
 * broker deduplication on, and fresh scalable topics to put segments in.
 */
final class PulsarFixture implements AutoCloseable {
    private static final AtomicInteger TOPICS = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(30);

    final PulsarStorage storage;
    final String namespace;

    /** A fixture over a storage someone else made (and closes). */
    PulsarFixture(PulsarStorage storage) {
        this.storage = storage;
        this.namespace = storage.settings().namespace();
    }

    PulsarFixture(String namespace) {
        var broker = TestBroker.shared();
        this.namespace = namespace;
        this.storage = PulsarStorage.connect(PulsarStorage.Settings.of(broker.serviceUrl(), broker.webUrl(),
                namespace));
        storage.prepareNamespace().block(WAIT);
    }

    /** A new scalable topic's name, never used before in this JVM. */
    String newTopic(String prefix) {
        return "persistent://" + namespace + "/" + prefix + "-" + TOPICS.incrementAndGet() + "-"
                + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    }

    /** The single segment of a one-segment layout. */
    static Segment onlySegment() {
        return Layout.initial(1, 1, 0).segments().values().iterator().next();
    }

    /** Every entry stored in the segment's topic, read raw through a subscription of its own. */
    List<Entry> stored(String topic, Segment segment) {
        List<Entry> out = new ArrayList<>();
        for (StoredEntry e : storedRaw(topic, segment)) {
            out.add(Entry.parse(e.bytes()));
        }
        return out;
    }

    /** The same, with each entry's position. */
    List<StoredEntry> storedRaw(String topic, Segment segment) {
        String name = storage.segmentTopic(topic, segment);
        MessageId last;
        try {
            last = storage.admin().topics().getLastMessageIdAsync(name).get();
        } catch (Exception e) {
            throw new IllegalStateException("cannot ask the last entry of " + name, e);
        }
        MessageIdImpl end = (MessageIdImpl) last;
        if (end.getEntryId() < 0) {
            return List.of();
        }
        SourcePosition lastPosition = SourcePosition.of(end.getLedgerId(), end.getEntryId());
        ReplicationCursor cursor = storage.log(topic, segment)
                .cursor("check-" + TOPICS.incrementAndGet(), StartAt.EARLIEST).block(WAIT);
        return cursor.read().takeUntil(e -> e.position().compareTo(lastPosition) >= 0).collectList().block(WAIT);
    }

    @Override
    public void close() {
        storage.close();
    }
}
