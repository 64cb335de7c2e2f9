package io.verbatim.pulsar;

import io.verbatim.model.HashRange;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.SourcePosition;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import org.apache.pulsar.client.api.ConsumerCryptoFailureAction;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MessageImpl;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.CursorStats;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What sealed segment topics stored of the replicators' entries, read from the broker, for {@link SealedLineage}.
 *
 * <p>Of a sealed topic: its broker's last deduplication snapshot (the {@code pulsar.dedup} cursor's properties:
 * per replicator producer name, the highest source position stored, as {@code <name>_LID} and {@code <name>_EID})
 * and the replicated entries stored after that snapshot, or in its last {@link #TAIL_ENTRIES} entries if that reaches
 * further back (a non-durable reader to the end). The snapshot can lag what the topic stored: Pulsar 4.0.7 skips a
 * snapshot while the one before is being written, and when a topic reloads it replays the entries after its last
 * snapshot by their original producer names only, then snapshots again at the end with the replicators' positions as
 * they were. A terminated topic's content is final, so what was read of it is kept ({@link #CACHED} topics, the
 * least recently used go first); a topic deleted is read as gone.
 */
final class SealedTails {
    /** The sealed topics whose reading is kept. */
    static final int CACHED = 256;
    /** The most ancestors one walk reads. */
    static final int MAX_ANCESTORS = 64;
    /** The most entries read after a topic's last dedup snapshot (one per entry on Verbatim's brokers). */
    static final int MAX_TAIL = 100_000;
    /** The entries at a sealed topic's end always read, whatever its last dedup snapshot says. */
    static final int TAIL_ENTRIES = 1_000;
    static final String DEDUP_CURSOR = "pulsar.dedup";
    /** How long a sealed topic may fail to be read before it is taken as unread. */
    static final Duration UNREADABLE_AFTER = Duration.ofMinutes(2);
    private static final String LEDGER_SUFFIX = "_LID";
    private static final String ENTRY_SUFFIX = "_EID";
    private static final Logger LOG = LoggerFactory.getLogger(SealedTails.class);

    /**
     * A sealed topic as read.
     *
     * @param highest per replicator producer name, the highest source position the last dedup snapshot holds
     * @param tail per source cluster, the whole entries stored after that snapshot
     * @param gone the topic does not exist (deleted) or could not be read: nothing is known of what it stored
     */
    record Tail(Map<String, SourcePosition> highest, Map<String, Set<SourcePosition>> tail, boolean gone) {
        static final Tail GONE = new Tail(Map.of(), Map.of(), true);

        SealedLineage.Ancestor of(Segment segment, String producerName, String sourceCluster) {
            return gone ? SealedLineage.Ancestor.unread(segment.id(), segment.range(), segment.parentIds())
                    : new SealedLineage.Ancestor(segment.id(), segment.range(), segment.parentIds(),
                            Optional.ofNullable(highest.get(producerName)),
                            tail.getOrDefault(sourceCluster, Set.of()), true);
        }
    }

    private final PulsarStorage storage;
    /** Reads under way, by topic: a second session asking meanwhile shares the first one's. */
    private final Map<String, Mono<Tail>> reading = new ConcurrentHashMap<>();
    /** Since when reads of a topic have failed (nanoTime), while they do. */
    private final Map<String, Long> failingSince = new ConcurrentHashMap<>();
    private final Map<String, Tail> read = Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Tail> eldest) {
            return size() > CACHED;
        }
    });

    SealedTails(PulsarStorage storage) {
        this.storage = storage;
    }

    /**
     * The highest source position per replicator producer name in a {@code pulsar.dedup} cursor's properties: the
     * broker keeps a replicator's position as two properties, {@code <name>_LID} and {@code <name>_EID}, in the form
     * {@link WirePositions} sends; a plain producer's sequence id (a property named as the producer) is not one.
     */
    static Map<String, SourcePosition> highest(Map<String, Long> properties) {
        Map<String, SourcePosition> out = new HashMap<>();
        properties.forEach((key, ledger) -> {
            if (key.endsWith(LEDGER_SUFFIX)) {
                String name = key.substring(0, key.length() - LEDGER_SUFFIX.length());
                Long entry = properties.get(name + ENTRY_SUFFIX);
                if (ledger != null && entry != null && ledger >= 0 && entry >= 0) {
                    out.put(name, WirePositions.decode(SourcePosition.of(ledger, entry)));
                }
            }
        });
        return out;
    }

    /**
     * The sealed ancestors of {@code segment} (a segment of the scalable {@code topic}) that can hold entries of
     * {@code producerName} (replicating {@code source} of {@code sourceCluster}), read ({@link SealedLineage#walk}, at
     * most {@link #MAX_ANCESTORS}). Fails naming the topic if one that exists cannot be read within the operation
     * timeout.
     */
    Mono<SealedLineage> lineage(String topic, Segment segment, LongFunction<Optional<Segment>> segments,
            String producerName, String sourceCluster, HashRange source) {
        return SealedLineage.walk(segment, segments, source, MAX_ANCESTORS,
                ancestor -> tail(storage.segmentTopic(topic, ancestor))
                        .map(t -> t.of(ancestor, producerName, sourceCluster)));
    }

    /**
     * What the sealed {@code segmentTopic} stored: kept once read of a terminated topic; one read at a time per topic,
     * shared by every session asking meanwhile. A topic that cannot be read fails the asking session (it is tried
     * again) until it has failed for {@link #UNREADABLE_AFTER}; from then on it is taken as unread, with a warning, so
     * one broken ancestor does not hold replication up for good (an entry it holds may then be stored twice).
     */
    Mono<Tail> tail(String segmentTopic) {
        Tail known = read.get(segmentTopic);
        if (known != null) {
            return Mono.just(known);
        }
        return reading.computeIfAbsent(segmentTopic, t -> fetch(t).doFinally(s -> reading.remove(t)).cache());
    }

    private Mono<Tail> fetch(String segmentTopic) {
        return Mono.fromFuture(() -> storage.terminated(segmentTopic)
                        .thenCompose(v -> storage.admin().topics().getInternalStatsAsync(segmentTopic)))
                .flatMap(stats -> readTail(segmentTopic, stats).doOnNext(t -> {
                    failingSince.remove(segmentTopic);
                    if ("Terminated".equals(stats.state)) {
                        read.put(segmentTopic, t);
                    }
                }))
                .timeout(storage.settings().operationTimeout())
                .onErrorResume(PulsarStorage::isGone, e -> {
                    LOG.warn("{}: gone before what it stored could be read; an entry a replicator sent there and"
                            + " sends again to a segment after it may be stored twice", segmentTopic);
                    read.put(segmentTopic, Tail.GONE);
                    return Mono.just(Tail.GONE);
                })
                .onErrorResume(e -> {
                    long since = failingSince.computeIfAbsent(segmentTopic, k -> System.nanoTime());
                    if (System.nanoTime() - since < UNREADABLE_AFTER.toNanos()) {
                        return Mono.error(new PulsarStorageException("cannot read what the sealed segment "
                                + segmentTopic + " stored of the replicated entries", PulsarStorage.cause(e)));
                    }
                    LOG.warn("{}: what it stored could not be read for {} s ({}); taken as unknown: an entry a"
                            + " replicator sent there and sends again to a segment after it may be stored twice",
                            segmentTopic, UNREADABLE_AFTER.toSeconds(), PulsarStorage.cause(e).toString());
                    return Mono.just(Tail.GONE);
                });
    }

    private Mono<Tail> readTail(String segmentTopic, PersistentTopicInternalStats stats) {
        CursorStats dedup = stats.cursors == null ? null : stats.cursors.get(DEDUP_CURSOR);
        Map<String, SourcePosition> highest = dedup == null || dedup.properties == null ? Map.of()
                : highest(dedup.properties);
        List<LedgerInfo> ledgers = stats.ledgers == null ? List.of() : stats.ledgers;
        Optional<SourcePosition> last = lastEntry(ledgers, stats.lastConfirmedEntry);
        if (last.isEmpty()) {
            return Mono.just(new Tail(Map.copyOf(highest), Map.of(), false)); // nothing stored
        }
        SourcePosition fromEnd = tailStart(ledgers, last.get(), TAIL_ENTRIES);
        Optional<SourcePosition> snapshot = dedup == null ? Optional.empty() : position(dedup.markDeletePosition);
        // from the end's last entries, or just after the snapshot if that is earlier (no snapshot: from the first)
        boolean afterSnapshot = snapshot.isPresent() && snapshot.get().compareTo(fromEnd) < 0;
        MessageId start = afterSnapshot ? id(snapshot.get()) : dedup == null ? MessageId.earliest : id(fromEnd);
        Map<String, Set<SourcePosition>> tail = new ConcurrentHashMap<>();
        EntryCount entries = new EntryCount();
        return Mono.usingWhen(
                        Mono.fromFuture(() -> {
                            var reader = storage.client().newReader(Schema.BYTES).topic(segmentTopic)
                                    .startMessageId(start).cryptoFailureAction(ConsumerCryptoFailureAction.CONSUME);
                            return (afterSnapshot ? reader : reader.startMessageIdInclusive()).createAsync();
                        }),
                        reader -> SealedTail.toEnd(reader)
                                // the reader hands out a batch's messages one by one: entries are counted
                                .takeWhile(m -> entries.add(m.getMessageId()) <= MAX_TAIL)
                                .doOnNext(m -> wholeEntry(m).ifPresent(p -> tail.computeIfAbsent(m.getReplicatedFrom(),
                                        k -> ConcurrentHashMap.newKeySet()).add(p)))
                                .then(Mono.fromRunnable(() -> {
                                    if (entries.count() > MAX_TAIL) {
                                        LOG.warn("{}: more than {} entries after its last dedup snapshot; read no"
                                                + " further", segmentTopic, MAX_TAIL);
                                    }
                                }))
                                .then(Mono.fromCallable(() -> new Tail(Map.copyOf(highest), copy(tail), false))),
                        (Reader<byte[]> reader) -> Mono.fromFuture(reader::closeAsync).onErrorResume(e -> Mono.empty()));
    }

    /** Distinct entries among messages read in order (a batch's messages share their entry's ledger and entry id). */
    static final class EntryCount {
        private long count;
        private long ledger = -1;
        private long entry = -1;

        /** Counts the entry {@code id} is in if it is not the last one counted; the count so far. */
        synchronized long add(MessageId id) {
            if (id instanceof MessageIdImpl m && (m.getLedgerId() != ledger || m.getEntryId() != entry)) {
                ledger = m.getLedgerId();
                entry = m.getEntryId();
                count++;
            }
            return count;
        }

        synchronized long count() {
            return count;
        }
    }

    private static Map<String, Set<SourcePosition>> copy(Map<String, Set<SourcePosition>> tail) {
        Map<String, Set<SourcePosition>> out = new HashMap<>();
        tail.forEach((cluster, positions) -> out.put(cluster, Set.copyOf(positions)));
        return Map.copyOf(out);
    }

    /**
     * Where a read of a topic's last {@code entries} entries starts: walking its {@code ledgers} back from
     * {@code last}, its last entry (the first entry if the topic holds fewer).
     */
    static SourcePosition tailStart(List<LedgerInfo> ledgers, SourcePosition last, int entries) {
        long left = entries;
        SourcePosition start = SourcePosition.of(last.ledgerId(), 0);
        for (int i = ledgers.size() - 1; i >= 0; i--) {
            LedgerInfo ledger = ledgers.get(i);
            if (ledger.ledgerId > last.ledgerId()) {
                continue; // opened after the last entry, empty
            }
            long count = ledger.ledgerId == last.ledgerId() ? last.entryId() + 1 : ledger.entries;
            if (count <= 0) {
                continue;
            }
            if (left <= count) {
                return SourcePosition.of(ledger.ledgerId, count - left);
            }
            left -= count;
            start = SourcePosition.of(ledger.ledgerId, 0);
        }
        return start;
    }

    /**
     * A topic's last entry: its last confirmed entry, or, when that names none ({@code L:-1}: a ledger opened after a
     * reload and nothing written since), the last entry of the last ledger with entries.
     */
    static Optional<SourcePosition> lastEntry(List<LedgerInfo> ledgers, String lastConfirmed) {
        Optional<SourcePosition> confirmed = position(lastConfirmed);
        if (confirmed.isPresent()) {
            return confirmed;
        }
        for (int i = ledgers.size() - 1; i >= 0; i--) {
            if (ledgers.get(i).entries > 0) {
                return Optional.of(SourcePosition.of(ledgers.get(i).ledgerId, ledgers.get(i).entries - 1));
            }
        }
        return Optional.empty();
    }

    /** {@code ledger:entry} as a position, if it is one with an entry. */
    private static Optional<SourcePosition> position(String text) {
        try {
            String[] parts = text == null ? new String[0] : text.split(":");
            return parts.length == 2 && Long.parseLong(parts[0]) >= 0 && Long.parseLong(parts[1]) >= 0
                    ? Optional.of(SourcePosition.of(Long.parseLong(parts[0]), Long.parseLong(parts[1])))
                    : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static MessageId id(SourcePosition p) {
        return new MessageIdImpl(p.ledgerId(), p.entryId(), -1);
    }

    /** The source position of a replicated whole entry, as its stamp carries it. */
    private static Optional<SourcePosition> wholeEntry(Message<byte[]> m) {
        if (!(m instanceof MessageImpl<byte[]> impl) || m.getReplicatedFrom() == null) {
            return Optional.empty();
        }
        return PulsarMetadata.sourcePosition(impl.getMessageBuilder()).filter(SourcePosition::isWhole);
    }
}
