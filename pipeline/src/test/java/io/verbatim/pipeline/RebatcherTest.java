package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryLimits;
import io.verbatim.model.entry.Message;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

class RebatcherTest {
    private static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("p").setSequenceId(9)
            .setPublishTime(1).build();

    @Test
    void partsAreSingleBucketSingleSegmentAndKeepEachKeysMessagesInOrder() {
        Random r = new Random(11);
        for (int trial = 0; trial < 200; trial++) {
            Layout destination = Layout.initial(1, 1 << r.nextInt(6), 0);
            for (int i = r.nextInt(5); i > 0; i--) {
                var active = destination.activeSegments();
                destination = destination.apply(Mutation.split(active.get(r.nextInt(active.size())).id()),
                        destination.epoch(), 0).layoutOrThrow();
            }
            List<Message> messages = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(60); i++) {
                messages.add(r.nextInt(8) == 0 ? Message.unkeyed(new byte[] {(byte) i})
                        : Message.of("k" + r.nextInt(20), new byte[] {(byte) i}));
            }
            Entry entry = Entries.batch(TEMPLATE, messages, CompressionType.LZ4);
            List<Rebatcher.Part> parts = Rebatcher.plan(entry, HashRange.FULL, destination, PartsCodec.SOURCE,
                    EntryLimits.DEFAULT);
            assertThat(Rebatcher.plan(entry, HashRange.FULL, destination, PartsCodec.SOURCE, EntryLimits.DEFAULT))
                    .as("deterministic").extracting(Rebatcher.Part::index, p -> p.destination().id())
                    .containsExactlyElementsOf(parts.stream().map(p -> Tuple.tuple(p.index(),
                            p.destination().id())).toList());
            List<Message> regrouped = new ArrayList<>();
            for (Rebatcher.Part part : parts) {
                var stamp = part.entry().facts().stamp().orElseThrow();
                assertThat(part.destination().buckets().holdsInOneBucket(stamp.asRange())).isTrue();
                assertThat(part.entry().metadata().getSequenceId()).isEqualTo(9);
                for (Message m : Entries.messages(part.entry())) {
                    m.routingHash().ifPresent(h ->
                            assertThat(part.destination().range().contains(h.segmentHash())).isTrue());
                    regrouped.add(m);
                }
            }
            assertThat(regrouped).hasSameSizeAs(messages);
            for (String key : messages.stream().flatMap(m -> m.key().stream()).distinct().toList()) {
                assertThat(regrouped.stream().filter(m -> m.key().filter(key::equals).isPresent()).map(m -> m.payload().get(0)).toList())
                        .as("messages of %s keep their order", key)
                        .containsExactlyElementsOf(messages.stream().filter(m -> m.key().filter(key::equals).isPresent())
                                .map(m -> m.payload().get(0)).toList());
            }
        }
    }

    /**
     * A plan without some messages (those a remote took under an earlier layout) holds exactly the others, each
     * once, each part numbered by its bucket in its destination segment: the same number, for the same messages,
     * as in the plan with every message.
     */
    @Test
    void aPlanWithoutSomeMessagesHoldsExactlyTheOthersEachPartNumberedByItsBucket() {
        Random r = new Random(13);
        for (int trial = 0; trial < 200; trial++) {
            Layout destination = Layout.initial(1, 1 << r.nextInt(4), 0);
            for (int i = r.nextInt(4); i > 0; i--) {
                var active = destination.activeSegments();
                destination = destination.apply(Mutation.split(active.get(r.nextInt(active.size())).id()),
                        destination.epoch(), 0).layoutOrThrow();
            }
            List<Message> messages = new ArrayList<>();
            int count = 1 + r.nextInt(40);
            for (int i = 0; i < count; i++) {
                messages.add(Message.of("k" + r.nextInt(20), new byte[] {(byte) i}));
            }
            Entry entry = Entries.batch(TEMPLATE, messages, CompressionType.LZ4);
            BitSet excluded = new BitSet();
            for (int i = 0; i < count; i++) {
                if (r.nextInt(3) == 0) {
                    excluded.set(i);
                }
            }
            List<Rebatcher.Part> parts = Rebatcher.plan(entry, HashRange.FULL, destination, PartsCodec.SOURCE,
                    EntryLimits.DEFAULT, excluded);
            Map<String, BitSet> whole = new HashMap<>();
            for (Rebatcher.Part p : Rebatcher.plan(entry, HashRange.FULL, destination, PartsCodec.SOURCE,
                    EntryLimits.DEFAULT)) {
                whole.put(p.destination().id() + "/" + p.index(), p.messages());
            }
            BitSet held = new BitSet();
            List<Byte> payloads = new ArrayList<>();
            for (int i = 0; i < parts.size(); i++) {
                Rebatcher.Part part = parts.get(i);
                assertThat(part.index()).isBetween(0, part.destination().buckets().count() - 1);
                BitSet sameNumber = whole.get(part.destination().id() + "/" + part.index());
                BitSet expectedHere = (BitSet) sameNumber.clone();
                expectedHere.andNot(excluded);
                assertThat(part.messages()).as("the whole plan's part of that number, less what is excluded")
                        .isEqualTo(expectedHere);
                assertThat(part.messages().intersects(held)).as("each message in one part").isFalse();
                held.or(part.messages());
                Entries.messages(part.entry()).forEach(m -> payloads.add(m.payload().get(0)));
                assertThat(Entries.messages(part.entry())).hasSize(part.messages().cardinality());
            }
            BitSet expected = new BitSet();
            expected.set(0, count);
            expected.andNot(excluded);
            assertThat(held).isEqualTo(expected);
            assertThat(payloads).containsExactlyInAnyOrderElementsOf(expected.stream().mapToObj(i -> (byte) i).toList());
        }
    }

    /**
     * A part's number is stable across layouts: planned again after another segment split (or after a restart that
     * forgot the plan), every segment the two layouts share gets the same parts, under the same numbers, holding the
     * same messages, so the destination's deduplication drops exactly what it took (numbered by place in the plan, a
     * split of a segment before it shifted the numbers: the crash campaign's seed 828927511692 lost a message).
     */
    @Test
    void aPartsNumberAndMessagesStayTheSameUnderEveryLayoutThatKeepsItsSegment() {
        Random r = new Random(14);
        for (int trial = 0; trial < 200; trial++) {
            Layout before = Layout.initial(1, 1 << r.nextInt(4), 0);
            for (int i = 1 + r.nextInt(3); i > 0; i--) {
                var active = before.activeSegments();
                before = before.apply(Mutation.split(active.get(r.nextInt(active.size())).id()), before.epoch(), 0)
                        .layoutOrThrow();
            }
            var active = before.activeSegments();
            Layout after = before.apply(Mutation.split(active.get(r.nextInt(active.size())).id()), before.epoch(), 0)
                    .layoutOrThrow();
            List<Message> messages = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(40); i++) {
                messages.add(Message.of("k" + r.nextInt(30), new byte[] {(byte) i}));
            }
            Entry entry = Entries.batch(TEMPLATE, messages, CompressionType.LZ4);
            Map<String, BitSet> planned = new HashMap<>();
            for (Rebatcher.Part p : Rebatcher.plan(entry, HashRange.FULL, before, PartsCodec.SOURCE,
                    EntryLimits.DEFAULT)) {
                planned.put(p.destination().id() + "/" + p.index(), p.messages());
            }
            for (Rebatcher.Part p : Rebatcher.plan(entry, HashRange.FULL, after, PartsCodec.SOURCE,
                    EntryLimits.DEFAULT)) {
                if (before.segment(p.destination().id()).filter(s -> s.isActive()).isPresent()) {
                    assertThat(planned.get(p.destination().id() + "/" + p.index()))
                            .as("trial %d: part %d of segment %d", trial, p.index(), p.destination().id())
                            .isEqualTo(p.messages());
                }
            }
        }
    }

    /** The slow path decompresses into a per-thread buffer: parts of earlier plans must not change. */
    @Test
    void partsOutliveLaterPlansWithEitherPartsCodecAndForSingles() {
        Random r = new Random(12);
        Layout destination = Layout.initial(1, 4, 0).apply(Mutation.split(0), 0, 0).layoutOrThrow();
        for (PartsCodec partsCodec : PartsCodec.values()) {
            List<byte[]> firstBytes = null;
            List<Rebatcher.Part> first = null;
            for (int trial = 0; trial < 20; trial++) {
                Entry entry;
                if (trial % 3 == 2) {
                    byte[] payload = new byte[1 + r.nextInt(5000)];
                    r.nextBytes(payload);
                    entry = Entries.single(TEMPLATE.toBuilder().setPartitionKey("k" + trial).build(),
                            ByteBuffer.wrap(payload), CompressionType.LZ4);
                } else {
                    List<Message> messages = new ArrayList<>();
                    for (int i = 0; i < 1 + r.nextInt(60); i++) {
                        byte[] payload = new byte[r.nextInt(3000)];
                        r.nextBytes(payload);
                        messages.add(Message.of("k" + r.nextInt(50), payload));
                    }
                    entry = Entries.batch(TEMPLATE, messages, CompressionType.LZ4);
                }
                List<Rebatcher.Part> parts = Rebatcher.plan(entry, HashRange.FULL, destination, partsCodec,
                        EntryLimits.DEFAULT);
                if (first == null) {
                    first = parts;
                    firstBytes = parts.stream().map(p -> p.entry().toByteArray()).toList();
                }
            }
            assertThat(first.stream().map(p -> p.entry().toByteArray()).toList())
                    .as("%s: the first entry's parts", partsCodec).containsExactlyElementsOf(firstBytes);
            for (Rebatcher.Part p : first) {
                assertThat(Entries.messages(Entry.parse(ByteBuffer.wrap(p.entry().toByteArray())))).isNotEmpty();
            }
        }
    }
}
