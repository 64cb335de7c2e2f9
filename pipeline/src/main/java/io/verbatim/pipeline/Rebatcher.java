package io.verbatim.pipeline;

import io.verbatim.model.HashRange;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryLimits;
import io.verbatim.model.entry.Message;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The slow path's plan for one entry: its messages regrouped by (destination segment, bucket), each
 * group one stamped single-bucket entry. Pure: same entry, layout, exclusions and first index, same parts in the
 * same order, so a part's index is stable across re-sends as long as the layout is.
 *
 * <p>When the layout changes while an entry is partly sent, the entry is planned again without the messages the
 * remote already took, and its parts numbered after every part planned before: a destination that took part 2 of
 * the old plan then never drops a new part as its duplicate, nor is sent a message twice.
 */
final class Rebatcher {
    private Rebatcher() {
    }

    /**
     * One re-batched part: the entry to send to {@code destination} as part {@code index}, holding the entry's
     * messages {@code messages} (indices in the entry, from 0).
     */
    record Part(Segment destination, Entry entry, int index, BitSet messages) {
    }

    static List<Part> plan(Entry entry, HashRange source, Layout destination, PartsCodec partsCodec,
            EntryLimits limits) {
        return plan(entry, source, destination, partsCodec, limits, new BitSet(), 0);
    }

    /** The plan without the messages in {@code excluded}, its parts numbered from {@code firstIndex}. */
    static List<Part> plan(Entry entry, HashRange source, Layout destination, PartsCodec partsCodec,
            EntryLimits limits, BitSet excluded, int firstIndex) {
        if (firstIndex < 0) {
            throw new IllegalArgumentException("first part index " + firstIndex + " is negative");
        }
        if (entry.isBatch()) {
            // Decompressed into a per-thread buffer, not a new array: every part copies its messages (a batch
            // is encoded anew, even uncompressed), so none views the buffer once this returns.
            return Entries.withBatchMessages(entry, limits, messages -> parts(entry, messages, source, destination,
                    partsCodec, excluded, firstIndex));
        }
        return parts(entry, Entries.messages(entry, limits), source, destination, partsCodec, excluded, firstIndex);
    }

    private static List<Part> parts(Entry entry, List<Message> messages, HashRange source, Layout destination,
            PartsCodec partsCodec, BitSet excluded, int firstIndex) {
        Map<Long, Group> groups = new TreeMap<>();
        for (int i = 0; i < messages.size(); i++) {
            if (excluded.get(i)) {
                continue;
            }
            Message m = messages.get(i);
            Optional<KeyHash> routing = m.routingHash();
            Segment d = destination.activeSegmentFor(routing.map(KeyHash::segmentHash).orElse(source.start()));
            int hashB = m.hashB(routing);
            int bucket = d.buckets().bucketOf(hashB);
            long order = (long) d.range().start() << 32 | bucket;
            groups.computeIfAbsent(order, k -> new Group(d, hashB)).add(m, i, hashB);
        }
        MessageMetadata template = templateOf(entry.metadata());
        CompressionType codec = partsCodec == PartsCodec.NONE ? CompressionType.NONE : entry.metadata().getCompression();
        List<Part> parts = new ArrayList<>(groups.size());
        for (Group g : groups.values()) {
            Entry part = entry.isBatch() ? Entries.batch(template, g.messages, codec, g.stamp)
                    : Entries.single(template, g.messages.get(0).payload(), codec);
            parts.add(new Part(g.destination, part, firstIndex + parts.size(), g.indices));
        }
        return parts;
    }

    /** The outer metadata a part keeps: everything but the batch and compression facts it recomputes. */
    private static MessageMetadata templateOf(MessageMetadata md) {
        return md.toBuilder().clearNumMessagesInBatch().clearCompression().clearUncompressedSize()
                .clearEntryHashMin().clearEntryHashMax().build();
    }

    private static final class Group {
        final Segment destination;
        final List<Message> messages = new ArrayList<>();
        final BitSet indices = new BitSet();
        /** The messages' smallest and largest hashB. */
        Stamp stamp;

        /** A group for a first message of {@code hashB}, which {@link #add} then adds. */
        Group(Segment destination, int hashB) {
            this.destination = destination;
            this.stamp = Stamp.of(hashB);
        }

        void add(Message m, int index, int hashB) {
            messages.add(m);
            indices.set(index);
            stamp = stamp.including(hashB);
        }
    }

}
