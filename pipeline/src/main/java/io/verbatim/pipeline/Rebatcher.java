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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The slow path's plan for one entry: its messages regrouped by (destination segment, bucket), each
 * group one stamped single-bucket entry. Pure: same entry and layout, same parts in the same order, so
 * a part's index is stable across re-sends as long as the layout is.
 */
final class Rebatcher {
    private Rebatcher() {
    }

    /** One re-batched part: the entry to send to {@code destination} as part {@code index}. */
    record Part(Segment destination, Entry entry, int index) {
    }

    static List<Part> plan(Entry entry, HashRange source, Layout destination, PartsCodec partsCodec,
            EntryLimits limits) {
        if (entry.isBatch()) {
            // Decompressed into a per-thread buffer, not a new array: every part copies its messages (a batch
            // is encoded anew, even uncompressed), so none views the buffer once this returns.
            return Entries.withBatchMessages(entry, limits, messages -> parts(entry, messages, source, destination,
                    partsCodec));
        }
        return parts(entry, Entries.messages(entry, limits), source, destination, partsCodec);
    }

    private static List<Part> parts(Entry entry, List<Message> messages, HashRange source, Layout destination,
            PartsCodec partsCodec) {
        Map<Long, Group> groups = new TreeMap<>();
        for (Message m : messages) {
            Optional<KeyHash> routing = m.routingHash();
            Segment d = destination.activeSegmentFor(routing.map(KeyHash::segmentHash).orElse(source.start()));
            int hashB = m.hashB(routing);
            int bucket = d.buckets().bucketOf(hashB);
            long order = (long) d.range().start() << 32 | bucket;
            groups.computeIfAbsent(order, k -> new Group(d, hashB)).add(m, hashB);
        }
        MessageMetadata template = templateOf(entry.metadata());
        CompressionType codec = partsCodec == PartsCodec.NONE ? CompressionType.NONE : entry.metadata().getCompression();
        List<Part> parts = new ArrayList<>(groups.size());
        for (Group g : groups.values()) {
            Entry part = entry.isBatch() ? Entries.batch(template, g.messages, codec, g.stamp)
                    : Entries.single(template, g.messages.get(0).payload(), codec);
            parts.add(new Part(g.destination, part, parts.size()));
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
        /** The messages' smallest and largest hashB. */
        Stamp stamp;

        /** A group for a first message of {@code hashB}, which {@link #add} then adds. */
        Group(Segment destination, int hashB) {
            this.destination = destination;
            this.stamp = Stamp.of(hashB);
        }

        void add(Message m, int hashB) {
            messages.add(m);
            stamp = stamp.including(hashB);
        }
    }

}
