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
 * group one stamped single-bucket entry, numbered by its bucket in its segment. Pure: same entry, layout and
 * exclusions, same parts in the same order.
 *
 * <p>A part's number is its destination bucket, not its place in the plan. A segment's buckets never change (a
 * rebucket rolls over to a new segment), so the same messages go to the same segment under the same number under
 * any layout that still has that segment, and after a restart that forgot every plan: the destination's
 * deduplication by {@code (ledgerId, entryId, part)} then drops exactly what it took. Numbered by place, a change of
 * another segment shifted the numbers, and a destination took a new part for a duplicate of an old one (lost) or an
 * old part's messages again under a new number (stored twice).
 *
 * <p>When the layout changes while an entry is partly sent, the entry is planned again without the messages the
 * remote is known to have taken: a sealed destination's children would otherwise take them again.
 */
final class Rebatcher {
    private Rebatcher() {
    }

    /**
     * One re-batched part: the entry to send to {@code destination} as part {@code index} (its bucket there), holding
     * the entry's messages {@code messages} (indices in the entry, from 0).
     */
    record Part(Segment destination, Entry entry, int index, BitSet messages) {
    }

    static List<Part> plan(Entry entry, HashRange source, Layout destination, PartsCodec partsCodec,
            EntryLimits limits) {
        return plan(entry, source, destination, partsCodec, limits, new BitSet());
    }

    /** The plan without the messages in {@code excluded}. */
    static List<Part> plan(Entry entry, HashRange source, Layout destination, PartsCodec partsCodec,
            EntryLimits limits, BitSet excluded) {
        if (entry.isBatch()) {
            // Decompressed into a per-thread buffer, not a new array: every part copies its messages (a batch
            // is encoded anew, even uncompressed), so none views the buffer once this returns.
            return Entries.withBatchMessages(entry, limits, messages -> parts(entry, messages, source, destination,
                    partsCodec, excluded));
        }
        return parts(entry, Entries.messages(entry, limits), source, destination, partsCodec, excluded);
    }

    private static List<Part> parts(Entry entry, List<Message> messages, HashRange source, Layout destination,
            PartsCodec partsCodec, BitSet excluded) {
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
            groups.computeIfAbsent(order, k -> new Group(d, bucket, hashB)).add(m, i, hashB);
        }
        MessageMetadata template = templateOf(entry.metadata());
        CompressionType codec = partsCodec == PartsCodec.NONE ? CompressionType.NONE : entry.metadata().getCompression();
        List<Part> parts = new ArrayList<>(groups.size());
        for (Group g : groups.values()) {
            Entry part = entry.isBatch() ? Entries.batch(template, g.messages, codec, g.stamp)
                    : Entries.single(template, g.messages.get(0).payload(), codec);
            parts.add(new Part(g.destination, part, g.bucket, g.indices));
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
        final int bucket;
        final List<Message> messages = new ArrayList<>();
        final BitSet indices = new BitSet();
        /** The messages' smallest and largest hashB. */
        Stamp stamp;

        /** A group for a first message of {@code hashB}, which {@link #add} then adds. */
        Group(Segment destination, int bucket, int hashB) {
            this.destination = destination;
            this.bucket = bucket;
            this.stamp = Stamp.of(hashB);
        }

        void add(Message m, int index, int hashB) {
            messages.add(m);
            indices.set(index);
            stamp = stamp.including(hashB);
        }
    }

}
