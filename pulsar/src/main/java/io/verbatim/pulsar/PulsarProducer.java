package io.verbatim.pulsar;

import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.VerbatimBucketBatcher;
import org.apache.pulsar.reactive.client.adapter.AdaptedReactivePulsarClientFactory;
import org.apache.pulsar.reactive.client.api.MessageSendResult;
import org.apache.pulsar.reactive.client.api.MessageSpec;
import org.apache.pulsar.reactive.client.api.MessageSpecBuilder;
import org.apache.pulsar.reactive.client.api.ReactiveMessageSender;
import org.apache.pulsar.reactive.client.api.ReactiveMessageSenderCache;
import org.apache.pulsar.reactive.client.api.ReactivePulsarClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A PIP-486 producer on a scalable topic held in Pulsar, through the Pulsar reactive client: each keyed
 * message goes to the active segment of its key, unkeyed ones round-robin, each segment's
 * {@link ReactiveMessageSender} batching per bucket and stamping each entry ({@link VerbatimBucketBatcher}).
 * A call's messages go bucket by bucket (stable: each key's order is kept), so batches are full.
 * Messages whose segment was sealed under them go again, in their order, on the layout that sealed it.
 */
public final class PulsarProducer implements AutoCloseable {
    private final PulsarStorage storage;
    private final PulsarSegments segments;
    private final String name;
    private final ReactivePulsarClient reactive;
    private final ReactiveMessageSenderCache cache;
    private final Map<String, ReactiveMessageSender<byte[]>> senders = new ConcurrentHashMap<>();
    private final AtomicLong roundRobin = new AtomicLong();

    public PulsarProducer(PulsarStorage storage, PulsarSegments segments, String name) {
        this.storage = storage;
        this.segments = segments;
        this.name = name;
        this.reactive = AdaptedReactivePulsarClientFactory.create(storage.client());
        // not the client's default cache: a call cancelled while its producer is made would break it for good
        this.cache = AdaptedReactivePulsarClientFactory.createCache(new ProducerCacheShield(segments.topic()));
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
        messages.sort(java.util.Comparator.comparingInt(m -> segment.buckets().bucketOf(m.hashB())));
        List<MessageSpec<byte[]>> specs = new ArrayList<>(messages.size());
        for (Message m : messages) {
            MessageSpecBuilder<byte[]> spec = MessageSpec.builder(m.payloadBytes());
            m.key().ifPresent(spec::key);
            m.orderingKey().ifPresent(spec::orderingKey);
            specs.add(spec.build());
        }
        return sender(segment, codec).sendMany(Flux.fromIterable(specs)).collectList()
                .map(java.util.Optional::of)
                // no producer on a terminated topic: nothing of this call went out
                .onErrorResume(PulsarProducer::isSealed, e -> Mono.just(java.util.Optional.empty()))
                .flatMap(sent -> sent.isEmpty() ? rerouted(messages, codec, layout) : Mono.just(sent.get())
                        .flatMap(results -> {
            List<SourcePosition> written = new ArrayList<>();
            List<Message> sealed = new ArrayList<>();
            for (int i = 0; i < results.size(); i++) {
                MessageSendResult<byte[]> r = results.get(i);
                if (r.getException() == null) {
                    position(r.getMessageId()).ifPresent(written::add);
                } else if (isSealed(r.getException())) {
                    sealed.add(messages.get(i));
                } else {
                    return Mono.error(new PulsarStorageException("cannot produce to "
                            + storage.segmentTopic(segments.topic(), segment), r.getException()));
                }
            }
            if (sealed.isEmpty()) {
                return Mono.just(written);
            }
            return rerouted(sealed, codec, layout).map(more -> {
                written.addAll(more);
                return written;
            });
        }));
    }

    /** After a seal: wait for the layout that seals the segment, then route the messages on it. */
    private Mono<List<SourcePosition>> rerouted(List<Message> messages, Compression codec, Layout stale) {
        return segments.layouts().filter(l -> l.epoch() > stale.epoch()).next()
                .timeout(storage.settings().operationTimeout(), Mono.error(() -> new PulsarStorageException("a segment of "
                        + segments.topic() + " was sealed under a produce call and no newer layout came within "
                        + storage.settings().operationTimeout().toSeconds() + " s; what the call sent to other segments"
                        + " may be stored", new java.util.concurrent.TimeoutException())))
                .flatMap(next -> attempt(messages, codec, next));
    }

    private ReactiveMessageSender<byte[]> sender(Segment segment, Compression codec) {
        String topic = storage.segmentTopic(segments.topic(), segment);
        return senders.computeIfAbsent(topic + "|" + codec, k -> reactive.messageSender(Schema.BYTES)
                .topic(topic)
                .producerName(name + "-" + segment.id() + "-" + codec.name().toLowerCase(java.util.Locale.ROOT))
                .cache(cache)
                .stopOnError(false)
                .batchingEnabled(true)
                .batcherBuilder(new VerbatimBucketBatcher(segment.buckets()))
                .maxInflight(10_000) // a call's messages all go to the batcher at once: full batches
                .batchingMaxPublishDelay(Duration.ofMillis(2))
                .batchingMaxMessages(1000)
                .compressionType(pulsarCodec(codec))
                .sendTimeout(storage.settings().operationTimeout())
                .build());
    }

    private static CompressionType pulsarCodec(Compression codec) {
        return switch (codec) {
            case NONE -> CompressionType.NONE;
            case LZ4 -> CompressionType.LZ4;
            case ZLIB -> CompressionType.ZLIB;
            case ZSTD -> CompressionType.ZSTD;
            case SNAPPY -> CompressionType.SNAPPY;
        };
    }

    /**
     * Where the message went; empty for {@code -1:-1}, the broker's answer to a resend its deduplication had
     * stored already (after a reconnect): stored once, at a position this answer does not say.
     */
    private static java.util.Optional<SourcePosition> position(MessageId id) {
        MessageIdImpl m = (MessageIdImpl) id;
        if (m.getLedgerId() < 0 || m.getEntryId() < 0) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(SourcePosition.of(m.getLedgerId(), m.getEntryId()));
    }

    private static boolean isSealed(Throwable e) {
        Throwable c = PulsarStorage.cause(e);
        // or gone: on a node behind the others, a segment their garbage collection deleted (the broker makes none
        // on demand here); the newer layout routes elsewhere
        return c instanceof PulsarClientException.TopicTerminatedException
                || c instanceof PulsarClientException.TopicDoesNotExistException;
    }

    @Override
    public void close() {
        try {
            cache.close();
        } catch (Exception e) {
            throw new PulsarStorageException("cannot close the producers of " + segments.topic(), e);
        }
    }
}
