package io.verbatim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/** Each check passes on good data and fails, naming the culprit, on data broken the way it guards against. */
class DeliveryChecksTest {
    private static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("p").setSequenceId(0)
            .setPublishTime(0).build();

    private final MemorySegments a = new MemorySegments("a", Layout.initial(1, 2, 0), Schedulers.immediate());
    private final MemorySegments b = new MemorySegments("b", Layout.initial(1, 2, 0), Schedulers.immediate());
    private final Map<String, MemorySegments> clusters = new LinkedHashMap<>();

    {
        clusters.put("a", a);
        clusters.put("b", b);
    }

    private static Message message(String origin, long counter, String key) {
        return Message.of(key, DeliveryChecks.payload(origin, counter));
    }

    /** Copies every entry of a's segment 0 to b, stamped as a replicator would. */
    private void replicateAll() {
        var entries = a.log(0).entries();
        for (int i = 0; i < entries.size(); i++) {
            Entry e = Entry.parse(entries.get(i).bytes());
            b.append(0, e.restamp(new ReplicationStamp("a", SourcePosition.of(0, i))));
        }
    }

    private static Predicate<ReplicationChecks.Check> named(String name) {
        return c -> c.name().equals(name);
    }

    /** The named check, its failing instance where it runs once per cluster and one failed. */
    private ReplicationChecks.Check check(String name, long produced) {
        List<ReplicationChecks.Check> all = DeliveryChecks.run(clusters, Map.of("a", produced)).stream()
                .filter(named(name)).toList();
        return all.stream().filter(c -> !c.passed()).findFirst().orElse(all.get(0));
    }

    @Test
    void goodDataPassesEveryCheck() {
        a.produce(List.of(message("a", 0, "k1"), message("a", 1, "k2")), Compression.LZ4);
        a.produce(List.of(message("a", 2, "k1")), Compression.NONE);
        replicateAll();
        assertThat(DeliveryChecks.run(clusters, Map.of("a", 3L))).allMatch(ReplicationChecks.Check::passed);
    }

    @Test
    void aMissingMessageFails() {
        a.produce(List.of(message("a", 0, "k1")), Compression.LZ4);
        replicateAll();
        ReplicationChecks.Check c = check("every message on every cluster", 2);
        assertThat(c.passed()).isFalse();
        assertThat(c.detail()).contains("a/1 is missing on a");
    }

    @Test
    void aWholeEntryStoredTwiceFails() {
        a.produce(List.of(message("a", 0, "k1")), Compression.LZ4);
        replicateAll();
        replicateAll();
        ReplicationChecks.Check c = check("exactly once on the fast path", 1);
        assertThat(c.passed()).isFalse();
        assertThat(c.detail()).contains("a/0 is stored twice on b");
    }

    @Test
    void aKeyGoingBackFails() {
        a.produce(List.of(message("a", 1, "k1")), Compression.LZ4);
        a.produce(List.of(message("a", 0, "k1")), Compression.LZ4);
        ReplicationChecks.Check c = check("per-origin order per key", 2);
        assertThat(c.passed()).isFalse();
        assertThat(c.detail()).contains("key k1 from a: message 0 after 1");
    }

    @Test
    void anEntryAcrossTwoBucketsFails() {
        String low = key(h -> h < 0x8000);
        String high = key(h -> h >= 0x8000);
        a.append(0, Entries.batch(TEMPLATE, List.of(message("a", 0, low), message("a", 1, high)), CompressionType.NONE));
        ReplicationChecks.Check c = check("no entry straddles a bucket", 2);
        assertThat(c.passed()).isFalse();
        assertThat(c.detail()).contains("on a").contains("has stamp");
    }

    @Test
    void aChangedVerbatimPayloadFails() {
        a.produce(List.of(message("a", 0, "k1")), Compression.NONE);
        Entry forged = Entries.batch(TEMPLATE, List.of(message("a", 0, "k1"), message("a", 0, "k1")),
                CompressionType.NONE);
        b.append(0, forged.restamp(new ReplicationStamp("a", SourcePosition.of(0, 0))));
        ReplicationChecks.Check c = check("verbatim payloads are the source's bytes", 1);
        assertThat(c.passed()).isFalse();
        assertThat(c.detail()).contains("changed on its way to b");
    }

    @Test
    void consumersSharingAKeyOfOneSegmentFail() {
        List<Message> one = List.of(message("a", 0, "k1"));
        List<Message> two = List.of(message("a", 1, "k1"));
        var deliveries = List.of(new DeliveryChecks.Delivered(0, 0, one),
                new DeliveryChecks.Delivered(1, 0, two));
        assertThat(DeliveryChecks.consumers("a", deliveries).get(0).passed()).isFalse();
        var backwards = List.of(new DeliveryChecks.Delivered(0, 0, two),
                new DeliveryChecks.Delivered(0, 0, one));
        assertThat(DeliveryChecks.consumers("a", backwards)).anyMatch(c -> !c.passed()
                && c.detail().contains("message 0 delivered after 1"));
    }

    private static String key(Predicate<Integer> hashB) {
        for (int i = 0; ; i++) {
            if (hashB.test(KeyHash.of("k" + i).hashB())) {
                return "k" + i;
            }
        }
    }
}
