package io.verbatim.pulsar;

import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pulsar.client.api.ConsumerCryptoFailureAction;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MessageImpl;
import org.apache.pulsar.common.api.proto.KeyValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Replicated entries that a sealed destination segment refused though it may have stored them, on one cluster's
 * Pulsar, by replicator producer name ({@code pulsar.repl.<source>.<segment>}).
 *
 * <p>Pulsar's client fails every send pending on a producer once the broker refuses one as terminated, and the
 * broker may store one of them after that (a write still at the bookies). The replicator then sends that entry
 * again to the segment's children, where the broker's deduplication, which is per topic, does not see the first
 * copy. So such a refusal is noted ({@link #refused}); the next session of the producer name on another topic (a
 * child: the destination names it in its layout stream only once the seal, termination and unload, is over, so the
 * sealed topic's content is final) first reads the sealed topic from the refusing session's last acknowledged entry
 * ({@link #resolve}), and a send of an entry found there is answered as a duplicate without being sent
 * ({@link #storedBeforeSeal}).
 *
 * <p>Whole entries only (the fast path, which J3 keeps exactly once). A slow-path part is numbered by its bucket in
 * its destination segment, so a child's part {@code p} holds other messages than part {@code p} refused by its
 * parent: matching them could drop messages. Such a part may be stored twice, as J3 allows.
 *
 * <p>Kept in memory: a replicator process restarted in between forgets it (and may store such an entry twice).
 * At most {@link #MAX_STORED} entries found are remembered per producer name; the oldest go first.
 */
final class SealedSends {
    static final int MAX_STORED = 10_000;
    private static final Logger LOG = LoggerFactory.getLogger(SealedSends.class);

    /**
     * A whole entry of {@code source} (its source position) that {@code topic} refused as terminated, sent by a
     * session whose last acknowledged entry there was {@code after} (none: it had none).
     */
    record Refusal(String topic, String source, SourcePosition position, Optional<SourcePosition> after) {
    }

    /** A read of a sealed topic: from just after {@code after} (the first entry if empty), for these entries. */
    record Read(String topic, String source, Optional<SourcePosition> after, Set<SourcePosition> wanted) {
        /** Whether a message read, replicated from {@code replicatedFrom} with {@code wire}, is one wanted. */
        boolean wants(String replicatedFrom, SourcePosition wire) {
            SourcePosition position = WirePositions.decode(wire);
            return position.isWhole() && source.equals(replicatedFrom) && wanted.contains(position);
        }
    }

    private final PulsarStorage storage;
    /** producer name → source position → its refusal. */
    private final Map<String, Map<SourcePosition, Refusal>> refused = new ConcurrentHashMap<>();
    /** producer name → source positions of whole entries found stored in a sealed topic. */
    private final Map<String, Set<SourcePosition>> stored = new ConcurrentHashMap<>();

    SealedSends(PulsarStorage storage) {
        this.storage = storage;
    }

    /** Whether a send of {@code position} that failed with {@code failure} may be stored though refused. */
    static boolean uncertain(Throwable failure, SourcePosition position) {
        return position.isWhole()
                && PulsarStorage.cause(failure) instanceof PulsarClientException.TopicTerminatedException;
    }

    /**
     * The reads that settle {@code refusals} for a session opening on {@code openingTopic}: one per other topic,
     * from the earliest point any of its refusals asks. A refusal on {@code openingTopic} itself waits: that topic
     * may still be being terminated.
     */
    static List<Read> reads(Collection<Refusal> refusals, String openingTopic) {
        Map<String, Read> byTopic = new LinkedHashMap<>();
        for (Refusal r : refusals) {
            if (r.topic().equals(openingTopic)) {
                continue;
            }
            byTopic.merge(r.topic(), new Read(r.topic(), r.source(), r.after(), Set.of(r.position())),
                    (a, b) -> new Read(a.topic(), a.source(), earlier(a.after(), b.after()), union(a.wanted(),
                            b.wanted())));
        }
        return List.copyOf(byTopic.values());
    }

    /**
     * The entry {@code noted} refused once more, by {@code now}: by the same topic (a later session there), read
     * from the earlier of the two points; by another, the newer refusal.
     */
    static Refusal again(Refusal noted, Refusal now) {
        return !noted.topic().equals(now.topic()) ? now
                : new Refusal(noted.topic(), noted.source(), noted.position(), earlier(noted.after(), now.after()));
    }

    /** Whether {@code found} holds the entry {@code position} is (or is a part of). */
    static boolean covers(Set<SourcePosition> found, SourcePosition position) {
        return found.contains(SourcePosition.of(position.ledgerId(), position.entryId()));
    }

    /** Notes a refusal as terminated of a send that may be stored all the same ({@link #uncertain}). */
    void refused(String producerName, Refusal refusal) {
        refused.computeIfAbsent(producerName, k -> new ConcurrentHashMap<>()).merge(refusal.position(), refusal,
                SealedSends::again);
    }

    /**
     * Reads each sealed topic other than {@code openingTopic} where a send of {@code producerName} was refused, and
     * notes which of those entries it stored. Fails if a topic cannot be read: the refusals stay for the next
     * session. A topic gone (deleted once drained) holds nothing to find: its refusals are dropped, with a warning.
     */
    Mono<Void> resolve(String producerName, String openingTopic) {
        Map<SourcePosition, Refusal> mine = refused.get(producerName);
        if (mine == null || mine.isEmpty()) {
            return Mono.empty();
        }
        return Flux.fromIterable(reads(mine.values(), openingTopic))
                .concatMap(read -> found(read).doOnNext(found -> {
                    for (SourcePosition position : read.wanted()) {
                        if (found.contains(position)) {
                            // noted before the refusal is dropped: a session resolving at the same time either
                            // still sees the refusal and reads too, or finds the entry noted here
                            remember(producerName, position);
                            LOG.info("{}: entry {} of {} was refused as terminated and stored nonetheless: not sent"
                                    + " again", read.topic(), position, producerName);
                        }
                        mine.remove(position);
                    }
                }))
                .then();
    }

    /** Whether the entry at {@code position} (or the whole entry it is a part of) is stored in a sealed segment. */
    boolean storedBeforeSeal(String producerName, SourcePosition position) {
        Set<SourcePosition> found = stored.get(producerName);
        return found != null && !found.isEmpty() && covers(found, position);
    }

    private void remember(String producerName, SourcePosition position) {
        stored.computeIfAbsent(producerName, k -> Collections.synchronizedSet(
                Collections.newSetFromMap(new LinkedHashMap<>() {
                    @Override
                    protected boolean removeEldestEntry(Map.Entry<SourcePosition, Boolean> eldest) {
                        return size() > MAX_STORED;
                    }
                }))).add(position);
    }

    private static Optional<SourcePosition> earlier(Optional<SourcePosition> a, Optional<SourcePosition> b) {
        return a.isEmpty() || b.isEmpty() ? Optional.empty() : a.get().compareTo(b.get()) <= 0 ? a : b;
    }

    private static Set<SourcePosition> union(Set<SourcePosition> a, Set<SourcePosition> b) {
        Set<SourcePosition> all = new HashSet<>(a);
        all.addAll(b);
        return Set.copyOf(all);
    }

    /** The entries among those {@code read} wants that its topic stores: a non-durable reader to the topic's end. */
    private Mono<Set<SourcePosition>> found(Read read) {
        MessageId start = read.after().<MessageId>map(p -> new MessageIdImpl(p.ledgerId(), p.entryId(), -1))
                .orElse(MessageId.earliest);
        Set<SourcePosition> found = ConcurrentHashMap.newKeySet();
        return Mono.usingWhen(
                        Mono.fromFuture(() -> storage.client().newReader(Schema.BYTES).topic(read.topic())
                                .startMessageId(start).cryptoFailureAction(ConsumerCryptoFailureAction.CONSUME)
                                .createAsync()),
                        reader -> SealedTail.toEnd(reader)
                                .doOnNext(m -> wirePosition(m).filter(w -> read.wants(m.getReplicatedFrom(), w))
                                        .ifPresent(w -> found.add(WirePositions.decode(w))))
                                .takeUntil(m -> found.size() == read.wanted().size())
                                .then(Mono.fromCallable(() -> Set.copyOf(found))),
                        (Reader<byte[]> reader) -> Mono.fromFuture(reader::closeAsync).onErrorResume(e -> Mono.empty()))
                .timeout(storage.settings().operationTimeout())
                .onErrorResume(e -> PulsarStorage.cause(e) instanceof PulsarClientException.TopicDoesNotExistException,
                        e -> {
                            LOG.warn("{}: gone before {} of its refused entries {} could be looked for there; a"
                                    + " child may store them a second time", read.topic(), read.wanted().size(),
                                    read.wanted());
                            return Mono.just(Set.of());
                        })
                .onErrorMap(e -> new PulsarStorageException("cannot read what the sealed segment " + read.topic()
                        + " stored of the replicated entries " + read.wanted() + " it refused as terminated",
                        PulsarStorage.cause(e)));
    }

    /** The source position a replicated message's entry carries, as the broker's dedup reads it. */
    private static Optional<SourcePosition> wirePosition(Message<byte[]> m) {
        if (!(m instanceof MessageImpl<byte[]> impl) || m.getReplicatedFrom() == null) {
            return Optional.empty();
        }
        for (KeyValue kv : impl.getMessageBuilder().getPropertiesList()) {
            if (kv.getKey().equals(ReplicationStamp.SOURCE_POSITION_PROPERTY)) {
                try {
                    return Optional.of(SourcePosition.parse(kv.getValue()));
                } catch (IllegalArgumentException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }
}
