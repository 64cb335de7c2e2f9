package io.verbatim.pulsar;

import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.VerbatimBucketBatcher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A PIP-486 producer on a scalable topic held in Pulsar: each keyed message goes to the active segment of its key,
 * unkeyed ones round-robin, through one {@link SegmentProducer} per segment and codec, batching per bucket and
 * stamping each entry ({@link VerbatimBucketBatcher}). A call's messages go bucket by bucket (stable: each key's
 * order is kept), so batches are full.
 *
 * <p>A segment sealed under a call: the messages its topic refused go again, in their order, on the layout that
 * sealed it, but only those it did not store. Pulsar's client reports every send pending on a producer as refused
 * once the broker refuses one as terminated, though the broker may store an earlier one after that; so the sealed
 * topic is read first ({@link SealedTail}), and what it holds of the call's messages, by sequence id, counts as
 * written there. What the call wrote to other segments is never written again.
 */
public final class PulsarProducer implements AutoCloseable {
    private final PulsarStorage storage;
    private final PulsarSegments segments;
    private final String name;
    private final Map<String, SegmentProducer> producers = new ConcurrentHashMap<>();
    private final AtomicLong roundRobin = new AtomicLong();
    private volatile boolean closed;

    public PulsarProducer(PulsarStorage storage, PulsarSegments segments, String name) {
        this.storage = storage;
        this.segments = segments;
        this.name = name;
    }

    /** Produces {@code messages}; the positions of the entries that hold them, each once, in order. */
    public Mono<List<SourcePosition>> produce(List<Message> messages, Compression codec) {
        return Mono.defer(() -> attempt(messages, codec, segments.layout()))
                .map(positions -> List.copyOf(new LinkedHashSet<>(positions)));
    }

    private Mono<List<SourcePosition>> attempt(List<Message> messages, Compression codec, Layout layout) {
        Map<Segment, List<Message>> bySegment = new LinkedHashMap<>();
        List<Segment> active = layout.activeSegments();
        for (Message m : messages) {
            KeyHash routing = m.routingHash().orElse(null);
            Segment s = routing == null ? active.get((int) (roundRobin.getAndIncrement() % active.size()))
                    : layout.activeSegmentFor(routing.segmentHash());
            bySegment.computeIfAbsent(s, k -> new ArrayList<>()).add(m);
        }
        List<Mono<List<SourcePosition>>> sends = new ArrayList<>();
        for (Map.Entry<Segment, List<Message>> e : bySegment.entrySet()) {
            sends.add(send(e.getKey(), e.getValue(), codec, layout));
        }
        return Flux.mergeSequential(sends).flatMapIterable(p -> p).collectList();
    }

    private Mono<List<SourcePosition>> send(Segment segment, List<Message> inCallOrder, Compression codec,
            Layout layout) {
        List<Message> messages = new ArrayList<>(inCallOrder);
        // a bucket's messages together: full stamped batches, and each key's order kept (a key has one bucket)
        messages.sort(Comparator.comparingInt(m -> segment.buckets().bucketOf(m.hashB())));
        SegmentProducer producer = producer(segment, codec);
        // the topic is kept until the call knows what it stored, should a seal refuse the sends
        return Mono.using(() -> storage.hold(producer.topic()), hold -> producer.send(messages).flatMap(sent -> {
            SegmentSends.Outcome outcome = SegmentSends.decide(sent);
            if (outcome instanceof SegmentSends.Written w) {
                return Mono.just(w.positions());
            }
            if (outcome instanceof SegmentSends.Failed f) {
                return Mono.error(new PulsarStorageException("cannot produce to " + producer.topic(), f.cause()));
            }
            SegmentSends.Sealed sealed = (SegmentSends.Sealed) outcome;
            retire(producer, sealed);
            return newer(layout).flatMap(next -> resolve(producer, sealed).flatMap(r -> r.again().isEmpty()
                    ? Mono.just(r.written())
                    : attempt(r.again(), codec, next).map(more -> {
                        List<SourcePosition> all = new ArrayList<>(r.written());
                        all.addAll(more);
                        return all;
                    })));
        }), Runnable::run);
    }

    /**
     * After a seal: the layout that seals the segment. It is held once the segment's topic is terminated, so what
     * the topic stored is final then.
     */
    private Mono<Layout> newer(Layout stale) {
        return segments.layouts().filter(l -> l.epoch() > stale.epoch()).next()
                .timeout(storage.settings().operationTimeout(), Mono.error(() -> new PulsarStorageException("a segment of "
                        + segments.topic() + " was sealed under a produce call and no newer layout came within "
                        + storage.settings().operationTimeout().toSeconds() + " s; what the call sent to other segments"
                        + " may be stored", new TimeoutException())));
    }

    /** What the sealed topic stored of the refused sends, and so what goes again. */
    private Mono<SegmentSends.Resolved> resolve(SegmentProducer producer, SegmentSends.Sealed sealed) {
        if (sealed.uncertain().isEmpty()) {
            return Mono.just(SegmentSends.resolve(sealed, Map.of()));
        }
        return SealedTail.stored(storage, producer.topic(), producer.name(), producer.storedAfter(),
                        sealed.uncertainSequenceIds())
                .map(stored -> SegmentSends.resolve(sealed, stored));
    }

    /** The segment's producer for {@code codec}: the one made before, unless it is broken. */
    private SegmentProducer producer(Segment segment, Compression codec) {
        String topic = storage.segmentTopic(segments.topic(), segment);
        return producers.compute(topic + "|" + codec, (k, old) -> {
            if (old != null && !old.broken()) {
                return old;
            }
            if (old != null) {
                old.close(new PulsarClientException.AlreadyClosedException("replaced: " + old.name() + " on " + topic));
            }
            SegmentProducer made = new SegmentProducer(storage, topic,
                    name + "-" + segment.id() + "-" + codec.name().toLowerCase(Locale.ROOT), segment.buckets(), codec);
            if (closed) {
                made.close(new PulsarClientException.AlreadyClosedException("the producers of " + segments.topic()
                        + " are closed"));
            }
            return made;
        });
    }

    /** A sealed segment's producer goes: the layout routes nothing to it any more. */
    private void retire(SegmentProducer producer, SegmentSends.Sealed sealed) {
        Throwable why = sealed.uncertain().isEmpty() ? null : sealed.uncertain().get(0).failure();
        producers.values().remove(producer);
        producer.close(why != null ? why : new PulsarClientException.TopicTerminatedException(
                producer.topic() + " is sealed"));
    }

    @Override
    public void close() {
        closed = true;
        PulsarClientException why = new PulsarClientException.AlreadyClosedException("the producers of "
                + segments.topic() + " are closed");
        producers.values().forEach(p -> p.close(why));
        producers.clear();
    }
}
