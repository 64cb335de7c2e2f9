package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.examples.FaultChecker.Produced;
import io.verbatim.examples.FaultChecker.Report;
import io.verbatim.examples.FaultChecker.Rule;
import io.verbatim.examples.FaultChecker.Stored;
import io.verbatim.examples.FaultChecker.Violation;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.pulsar.WirePositions;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

/**
 * The fault suite's checker on stores made by hand and by a seeded generator: a faithful store passes, and each
 * way of breaking one is reported under its rule. A failure names the seed; {@code -Dverbatim.seed=} replays it.
 */
class FaultCheckerTest {
    private static final long SEED = Long.getLong("verbatim.seed", 23_15L);
    private static final Map<String, String> SAME_LAYOUTS = Map.of("a", "L", "b", "L");

    private static BitSet bits(int... counters) {
        BitSet b = new BitSet();
        for (int c : counters) {
            b.set(c);
        }
        return b;
    }

    private static Stored m(String payload, String key) {
        return new Stored(0, "0:0", payload, key, false);
    }

    private static Stored part(String payload, String key) {
        return new Stored(0, "0:0:1", payload, key, true);
    }

    private static List<Rule> rules(Report r) {
        return r.violations().stream().map(Violation::rule).toList();
    }

    @Test
    void everyAcknowledgedMessageOnEveryClusterPasses() {
        Map<String, Produced> produced = Map.of("a", new Produced(bits(0, 1), bits(0, 1, 2)));
        List<Stored> all = List.of(m("a/0", "k"), m("a/1", "k"));
        Report r = FaultChecker.check(Map.of("a", all, "b", all), produced, SAME_LAYOUTS);
        assertThat(r.violations()).isEmpty();
        assertThat(r.checked()).isEqualTo(2);
        assertThat(r.unknownEverywhere()).isZero();
    }

    @Test
    void anAcknowledgedMessageMissingOnOneClusterIsReportedOnThatCluster() {
        Map<String, Produced> produced = Map.of("a", new Produced(bits(0, 1), bits(0, 1)));
        Report r = FaultChecker.check(Map.of("a", List.of(m("a/0", "k"), m("a/1", "k")), "b", List.of(m("a/0", "k"))),
                produced, SAME_LAYOUTS);
        assertThat(r.violations()).extracting(Violation::rule, Violation::id)
                .containsExactly(Tuple.tuple(Rule.MISSING, "missing a/1 on b"));
    }

    @Test
    void anUnknownMessageIsNeverRequiredAndCountedWhereItWent() {
        Map<String, Produced> produced = Map.of("a", new Produced(bits(0), bits(0, 1, 2, 3)));
        Report r = FaultChecker.check(Map.of("a", List.of(m("a/0", "k"), m("a/1", "k"), m("a/2", "k")),
                "b", List.of(m("a/0", "k"), m("a/1", "k"))), produced, SAME_LAYOUTS);
        assertThat(r.violations()).isEmpty();
        assertThat(r.unknownEverywhere()).isEqualTo(1); // a/1
        assertThat(r.unknownSomewhere()).isEqualTo(1); // a/2; a/3 nowhere
    }

    @Test
    void aSecondCopyIsADuplicateUnlessOneCopyCameThroughTheSlowPath() {
        Map<String, Produced> produced = Map.of("a", new Produced(bits(0, 1), bits(0, 1)));
        List<Stored> twice = List.of(m("a/0", "k"), m("a/0", "k"), m("a/1", "k"));
        List<Stored> slow = List.of(part("a/0", "k"), m("a/0", "k"), m("a/1", "k"));
        assertThat(rules(FaultChecker.check(Map.of("a", twice), produced, Map.of()))).containsExactly(Rule.DUPLICATE);
        assertThat(rules(FaultChecker.check(Map.of("a", slow), produced, Map.of()))).isEmpty();
    }

    /**
     * A re-batched part is told by its entry's source position, which Pulsar stores in its wire form (the part in
     * the entry id's low 16 bits): read without decoding, every part would look whole and every copy of the seal
     * window a duplicate.
     */
    @Test
    void aPartIsToldByItsSourcePositionDecodedAsItsStorageKeepsIt() {
        SourcePosition part = SourcePosition.of(3, 5).withPart(1);
        Map<Long, List<StoredEntry>> memory = Map.of(0L, List.of(replicated(part)));
        Map<Long, List<StoredEntry>> pulsar = Map.of(0L, List.of(replicated(WirePositions.encode(part))));
        assertThat(FaultChecker.messages(memory, UnaryOperator.identity())).extracting(Stored::part).containsExactly(true);
        assertThat(FaultChecker.messages(pulsar, WirePositions::decode)).extracting(Stored::part).containsExactly(true);
        assertThat(FaultChecker.messages(pulsar, UnaryOperator.identity())).extracting(Stored::part).containsExactly(false);
        assertThat(FaultChecker.messages(Map.of(0L, List.of(replicated(WirePositions.encode(SourcePosition.of(3, 5))))),
                WirePositions::decode)).extracting(Stored::part, Stored::payload, Stored::key)
                .containsExactly(Tuple.tuple(false, "a/0", "k"));
    }

    /** An entry of message {@code a/0} (key {@code k}) replicated from {@code a} at {@code position}, as stored. */
    private static StoredEntry replicated(SourcePosition position) {
        Entry entry = Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(0).setPublishTime(1)
                .build(), List.of(Message.of("k", "a/0".getBytes(StandardCharsets.UTF_8))), CompressionType.NONE)
                .restamp(new ReplicationStamp("a", position));
        ByteBuffer bytes = ByteBuffer.allocate(Arrays.stream(entry.buffers()).mapToInt(ByteBuffer::remaining).sum());
        for (ByteBuffer b : entry.buffers()) {
            bytes.put(b.duplicate());
        }
        return new StoredEntry(SourcePosition.of(0, 0), bytes.flip());
    }

    @Test
    void aKeysMessagesOutOfOrderAreReportedButAnotherKeysAreNot() {
        Map<String, Produced> produced = Map.of("a", new Produced(bits(0, 1, 2), bits(0, 1, 2)));
        List<Stored> swapped = List.of(m("a/1", "k"), m("a/0", "k"), m("a/2", "j"));
        List<Stored> otherKey = List.of(m("a/1", "k"), m("a/0", "j"), m("a/2", "k"));
        assertThat(FaultChecker.check(Map.of("a", swapped), produced, Map.of()).violations())
                .extracting(Violation::id).containsExactly("order a/0 on a");
        assertThat(FaultChecker.check(Map.of("a", otherKey), produced, Map.of()).violations()).isEmpty();
    }

    @Test
    void aMessageOfAnUnknownCallHasNoOrder() {
        // a/0 timed out; a/1 was issued after and acknowledged; a/0 was stored after all
        Map<String, Produced> produced = Map.of("a", new Produced(bits(1), bits(0, 1)));
        assertThat(FaultChecker.check(Map.of("a", List.of(m("a/1", "k"), m("a/0", "k"))), produced, Map.of())
                .violations()).isEmpty();
    }

    @Test
    void whatWasNeverSentIsReportedForeignPayloadUnknownOriginAndUnsentCounterAlike() {
        Map<String, Produced> produced = Map.of("a", new Produced(bits(0), bits(0)));
        List<Stored> stored = List.of(m("a/0", "k"), m("hello", "k"), m("z/0", "k"), m("a/7", "k"));
        Report r = FaultChecker.check(Map.of("a", stored), produced, Map.of());
        assertThat(r.violations()).extracting(Violation::rule)
                .containsExactly(Rule.NEVER_SENT, Rule.NEVER_SENT, Rule.NEVER_SENT);
    }

    @Test
    void differentLayoutsAreReported() {
        Report r = FaultChecker.check(Map.of(), Map.of(), Map.of("a", "0000-ffff/N4", "b", "0000-7fff/N2 8000-ffff/N2"));
        assertThat(rules(r)).containsExactly(Rule.LAYOUTS);
    }

    @Test
    void anAcknowledgedCounterThatWasNotSentIsRefused() {
        assertThatThrownBy(() -> new Produced(bits(3), bits(0))).hasMessageContaining("counter 3");
    }

    /**
     * A seeded store: each origin's messages on every cluster in order per key (keys interleaved at random),
     * unknown ones on some. It passes; dropping one acknowledged message from one cluster, or swapping two
     * acknowledged ones of a key, is reported, and nothing else is.
     */
    @Test
    void aFaithfulStorePassesAndEachBreakIsReportedUnderItsRule() {
        for (int run = 0; run < 200; run++) {
            long seed = SEED + run;
            Random r = new Random(seed);
            List<String> clusters = List.of("a", "b", "c");
            Map<String, Produced> produced = new LinkedHashMap<>();
            Map<String, List<Stored>> stored = new LinkedHashMap<>();
            clusters.forEach(c -> stored.put(c, new ArrayList<>()));
            for (String origin : clusters) {
                int n = 1 + r.nextInt(200);
                BitSet sent = new BitSet();
                sent.set(0, n);
                BitSet acked = new BitSet();
                for (int i = 0; i < n; i++) {
                    if (r.nextInt(10) > 0) {
                        acked.set(i);
                    }
                }
                produced.put(origin, new Produced(acked, sent));
                for (String c : clusters) {
                    for (int i = 0; i < n; i++) {
                        if (acked.get(i) || r.nextBoolean()) {
                            stored.get(c).add(m(origin + "/" + i, "k" + (i % 7)));
                        }
                    }
                }
            }
            Map<String, String> layouts = Map.of("a", "L", "b", "L", "c", "L");
            assertThat(FaultChecker.check(stored, produced, layouts).violations()).as("seed " + seed).isEmpty();

            String victim = clusters.get(r.nextInt(3));
            List<Stored> messages = stored.get(victim);
            int at = indexOfAcknowledged(messages, produced, r);
            if (at >= 0) {
                Stored dropped = messages.remove(at);
                assertThat(rules(FaultChecker.check(stored, produced, layouts))).as("seed " + seed + ", dropped "
                        + dropped).containsExactly(Rule.MISSING);
                messages.add(at, dropped);
            }

            int[] pair = sameKeyPair(messages, produced, r);
            if (pair != null) {
                Collections.swap(messages, pair[0], pair[1]);
                assertThat(rules(FaultChecker.check(stored, produced, layouts))).as("seed " + seed + ", swapped")
                        .containsExactly(Rule.ORDER);
            }
        }
    }

    private static boolean acknowledged(Stored m, Map<String, Produced> produced) {
        String[] id = m.payload().split("/");
        return produced.get(id[0]).acknowledged().get(Integer.parseInt(id[1]));
    }

    /** A random position holding an acknowledged message, or -1 if none does. */
    private static int indexOfAcknowledged(List<Stored> messages, Map<String, Produced> produced, Random r) {
        List<Integer> acknowledged = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            String[] id = messages.get(i).payload().split("/");
            if (produced.get(id[0]).acknowledged().get(Integer.parseInt(id[1]))) {
                acknowledged.add(i);
            }
        }
        return acknowledged.isEmpty() ? -1 : acknowledged.get(r.nextInt(acknowledged.size()));
    }

    /** Two positions holding acknowledged messages of one (origin, key), or null if none are found. */
    private static int[] sameKeyPair(List<Stored> messages, Map<String, Produced> produced, Random r) {
        for (int tries = 0; tries < 1000; tries++) {
            int i = r.nextInt(messages.size());
            String origin = messages.get(i).payload().split("/")[0];
            if (!acknowledged(messages.get(i), produced)) {
                continue;
            }
            for (int j = i + 1; j < messages.size(); j++) {
                if (messages.get(j).key().equals(messages.get(i).key()) && acknowledged(messages.get(j), produced)
                        && messages.get(j).payload().split("/")[0].equals(origin)) {
                    return new int[] {i, j};
                }
            }
        }
        return null;
    }
}
