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
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
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
                    .containsExactlyElementsOf(parts.stream().map(p -> org.assertj.core.groups.Tuple.tuple(p.index(),
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
}
