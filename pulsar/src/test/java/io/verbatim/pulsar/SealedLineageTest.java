package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pulsar.SealedLineage.Ancestor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Which entries a replicator sends again to a destination segment are stored in its sealed ancestors (pure): by
 * example, and by a seeded model of a replicator killed and restarted while the destination splits and merges.
 */
class SealedLineageTest {
    private static final HashRange LOW = HashRange.of(0, 0x7FFF);
    private static final HashRange HIGH = HashRange.of(0x8000, 0xFFFF);

    private static SourcePosition e(long entry) {
        return SourcePosition.of(1, entry);
    }

    private static Ancestor read(long id, HashRange range, List<Long> parents, long highest) {
        return new Ancestor(id, range, parents, Optional.of(e(highest)), Set.of(), true);
    }

    /** Whether {@code lineage} covers {@code position} of an entry spanning the low half. */
    private static boolean covers(SealedLineage lineage, SourcePosition position) {
        return lineage.covers(position, () -> LOW);
    }

    @Test
    void aSplitChildsEntriesAtOrBelowWhatItsParentStoredAreStoredThere() {
        SealedLineage lineage = new SealedLineage(List.of(0L), Map.of(0L, read(0, HashRange.FULL, List.of(), 7)));
        assertThat(covers(lineage, e(5))).isTrue();
        assertThat(covers(lineage, e(7))).isTrue();
        assertThat(covers(lineage, e(8))).isFalse();
        assertThat(covers(lineage, e(7).withPart(2))).as("a part of an entry stored").isTrue();
        assertThat(covers(lineage, e(8).withPart(0))).isFalse();
    }

    @Test
    void anEntryTheParentTookOnlyPartsOfIsNotStoredWhole() {
        SealedLineage lineage = new SealedLineage(List.of(0L),
                Map.of(0L, new Ancestor(0, HashRange.FULL, List.of(), Optional.of(e(7).withPart(1)), Set.of(), true)));
        assertThat(covers(lineage, e(6))).isTrue();
        assertThat(covers(lineage, e(7))).as("parts are numbered by the layout they were cut for").isFalse();
        assertThat(covers(lineage, e(7).withPart(0))).isFalse();
    }

    @Test
    void aMergeChildLooksOnlyAtTheParentHoldingTheEntrysSpan() {
        SealedLineage merged = new SealedLineage(List.of(1L, 2L),
                Map.of(1L, read(1, LOW, List.of(), 3), 2L, read(2, HIGH, List.of(), 9)));
        assertThat(merged.covers(e(3), () -> HashRange.of(0, 0x3FFF))).isTrue();
        assertThat(merged.covers(e(5), () -> HashRange.of(0, 0x3FFF)))
                .as("the high parent took later entries of the source, not this one").isFalse();
        assertThat(merged.covers(e(5), () -> HashRange.of(0x9000, 0x9000))).as("a key in the high half").isTrue();
        HashRange straddling = HashRange.of(0x4000, 0xBFFF);
        assertThat(merged.covers(e(3), () -> straddling)).as("past both parents' highest").isTrue();
        assertThat(merged.covers(e(5), () -> straddling)).as("past only one: its part for the other may be missing")
                .isFalse();
    }

    @Test
    void anEntryFoundInATailIsStoredWhateverTheWatermarks() {
        SealedLineage lineage = new SealedLineage(List.of(0L),
                Map.of(0L, new Ancestor(0, HashRange.FULL, List.of(), Optional.of(e(3)), Set.of(e(9)), true)));
        assertThat(covers(lineage, e(9))).isTrue();
        assertThat(covers(lineage, e(9).withPart(0))).isTrue();
        assertThat(covers(lineage, e(8))).as("after the snapshot, not in the tail: not stored").isFalse();
    }

    @Test
    void anAncestorNotReadOrGoneHoldsNothingKnown() {
        assertThat(covers(new SealedLineage(List.of(0L), Map.of()), e(1))).isFalse();
        assertThat(covers(new SealedLineage(List.of(0L), Map.of(0L, Ancestor.unread(0, HashRange.FULL, List.of()))),
                e(1))).isFalse();
        SealedLineage oneUnknown = new SealedLineage(List.of(1L, 2L), Map.of(1L, read(1, LOW, List.of(), 9)));
        assertThat(oneUnknown.covers(e(1), () -> HashRange.of(0x4000, 0xBFFF)))
                .as("a merge parent not read: what the straddling entry put there is unknown").isFalse();
    }

    @Test
    void aGrandparentIsAskedWhenTheParentIsNotPastTheEntry() {
        Map<Long, Ancestor> line = Map.of(1L, new Ancestor(1, LOW, List.of(0L), Optional.empty(), Set.of(), true),
                0L, read(0, HashRange.FULL, List.of(), 6));
        SealedLineage lineage = new SealedLineage(List.of(1L), line);
        assertThat(covers(lineage, e(6))).isTrue();
        assertThat(covers(lineage, e(7))).isFalse();
    }

    @Test
    void aWalkReadsEveryKnownAncestorOverlappingTheSourceNearestFirst() {
        Layout layout = Layout.initial(1, 4, 0);
        long root = layout.activeSegments().get(0).id();
        layout = layout.apply(Mutation.split(root), layout.epoch(), 0).layoutOrThrow();
        Segment low = layout.activeSegments().get(0);
        Segment high = layout.activeSegments().get(1);
        layout = layout.apply(Mutation.split(low.id()), layout.epoch(), 0).layoutOrThrow();
        Segment child = layout.activeSegments().get(0);
        Layout last = layout;
        List<Long> asked = new ArrayList<>();
        SealedLineage lineage = SealedLineage.walk(child, last::segment, HashRange.of(0, 10), 64, s -> {
            asked.add(s.id());
            return Mono.just(read(s.id(), s.range(), s.parentIds(), s.id() == root ? 9 : 4));
        }).block();
        assertThat(asked).as("not the high half: no entry of the source is there").containsExactly(low.id(), root)
                .doesNotContain(high.id());
        assertThat(covers(lineage, e(9))).as("the root took entries its child skipped").isTrue();
        asked.clear();
        SealedLineage.walk(child, id -> id == root ? Optional.empty() : last.segment(id), HashRange.of(0, 10), 64,
                s -> {
                    asked.add(s.id());
                    return Mono.just(read(s.id(), s.range(), s.parentIds(), 4));
                }).block();
        assertThat(asked).as("a pruned segment is not read").containsExactly(low.id());
    }

    /**
     * A replicator of one source segment sends entries (single keyed messages, and batches spanning the source range)
     * to a destination that splits and merges; it is killed at random (its unanswered window and part of its
     * acknowledged-but-not-committed progress lost), and a sealed segment may store a send it refused. Each restart
     * sends again from the cursor, by the layout of then, skipping what {@link SealedLineage} says is stored.
     * Checked: what is skipped is stored (nothing lost), every entry ends stored in full, a single message is stored
     * once and a batch is never stored whole twice; a batch's messages are stored again only where parts were involved
     * (the slow path across a seal, which J3 allows): counted.
     */
    @Test
    void aReplicatorKilledWhileTheDestinationSplitsAndMergesLosesNothingAndStoresNoWholeEntryTwice() {
        long seed = Long.getLong("verbatim.seed", 495_006L);
        int cases = 1_000 * Integer.getInteger("verbatim.scale", 1);
        Random seeds = new Random(seed);
        int partRepeats = 0;
        for (int i = 0; i < cases; i++) {
            long caseSeed = seeds.nextLong();
            Model model = new Model(new Random(caseSeed));
            try {
                partRepeats += model.run();
            } catch (Throwable t) {
                throw new AssertionError("case " + i + " (case seed " + caseSeed + ") failed; replay with"
                        + " -Dverbatim.seed=" + seed + ": " + t.getMessage() + "\n" + model.trace, t);
            }
        }
        System.out.printf("SealedLineage model: %d cases, %d batches with messages stored again through parts%n",
                cases, partRepeats);
    }

    /** One run of the model. */
    private static final class Model {
        private final Random random;
        private final HashRange source;
        private final int entries;
        /** An entry's routing hash, or -1 for a batch spanning the whole source range. */
        private final int[] point;
        /** Per entry, what was stored of it, once each time. */
        private final List<List<Stored>> stored = new ArrayList<>();
        private final Map<Long, List<SourcePosition>> topic = new HashMap<>();
        private Layout layout = Layout.initial(2, 8, 0);
        private int acked = -1;
        /** What happened, for a failure's message. */
        private final StringBuilder trace = new StringBuilder();

        Model(Random random) {
            this.random = random;
            int a = random.nextInt(HashRange.MAX_HASH);
            int b = Math.min(HashRange.MAX_HASH, a + random.nextInt(HashRange.MAX_HASH / 2));
            this.source = HashRange.of(a, b);
            this.entries = 20 + random.nextInt(60);
            this.point = new int[entries];
            for (int i = 0; i < entries; i++) {
                point[i] = random.nextInt(4) == 0 ? -1 : a + random.nextInt(b - a + 1);
                stored.add(new ArrayList<>());
            }
        }

        /** What was stored of an entry: the hash range of its messages, whole or as a part. */
        private record Stored(HashRange range, boolean whole) {
        }

        /** Runs passes to the end; returns how many batches had messages stored again through parts. */
        int run() {
            for (int pass = 0; acked < entries - 1 && pass < 10_000; pass++) {
                pass(pass > 200); // in the end, passes without faults
            }
            assertThat(acked).as("every entry acknowledged").isEqualTo(entries - 1);
            int partRepeats = 0;
            for (int i = 0; i < entries; i++) {
                List<Stored> of = stored.get(i);
                assertThat(complete(i)).as("entry %d stored in full", i).isTrue();
                if (point[i] >= 0) {
                    assertThat(of).as("entry %d, a single message", i).hasSize(1);
                } else {
                    assertThat(of.stream().filter(Stored::whole).count()).as("entry %d stored whole", i)
                            .isLessThanOrEqualTo(1);
                    partRepeats += repeated(of) ? 1 : 0;
                }
            }
            return partRepeats;
        }

        /**
         * One pass from the cursor. A send that fails (refused by a sealed segment, or a transient failure) breaks its
         * session; sends to other segments already in flight (the next few entries) still land, as they do in a
         * pipelined pass, and the pass ends. A kill ends it at once.
         */
        private void pass(boolean calm) {
            Layout known = layout;
            Map<Long, SealedLineage> sessions = new HashMap<>();
            Set<Long> broken = new HashSet<>();
            int answered = acked;
            int failedAt = -1;
            int stopAt = entries - 1;
            trace.append("pass from ").append(acked + 1).append(" by ").append(ids(known)).append('\n');
            for (int i = acked + 1; i <= stopAt; i++) {
                if (!calm && random.nextInt(12) == 0) {
                    change();
                }
                if (!calm && random.nextInt(15) == 0) {
                    break; // killed: what was answered since the last acknowledgement is sent again
                }
                boolean ok = true;
                for (Unit u : units(i, known)) {
                    long id = u.segment().id();
                    if (broken.contains(id)) {
                        ok = false;
                        continue;
                    }
                    SealedLineage lineage = sessions.computeIfAbsent(id, k -> lineage(u.segment()));
                    HashRange span = point[i] >= 0 ? HashRange.of(point[i], point[i]) : source;
                    if (lineage.covers(u.position(), () -> span)) {
                        trace.append("  ").append(u).append(" skipped\n");
                        assertThat(covered(i, u.range())).as("%s skipped as stored in an ancestor, but not all its"
                                + " messages are stored", u).isTrue();
                        continue;
                    }
                    Segment now = layout.segment(id).orElseThrow();
                    List<SourcePosition> there = topic.computeIfAbsent(id, k -> new ArrayList<>());
                    boolean fresh = there.isEmpty() || u.position().compareTo(there.get(there.size() - 1)) > 0;
                    boolean failed = now.isSealed() || !calm && random.nextInt(20) == 0;
                    trace.append("  ").append(u).append(failed ? " failed" : fresh ? " stored" : " duplicate");
                    if (failed) {
                        if (now.isSealed() && fresh && random.nextInt(3) == 0) {
                            store(there, u, i); // refused as terminated, stored all the same
                            trace.append(" (stored)");
                        }
                        broken.add(id);
                        ok = false;
                    } else if (fresh) {
                        store(there, u, i);
                    }
                    trace.append('\n');
                }
                if (!ok && failedAt < 0) {
                    failedAt = i;
                    stopAt = Math.min(stopAt, i + random.nextInt(6)); // in flight to other segments
                }
                if (failedAt < 0) {
                    answered = i;
                }
            }
            acked = answered == acked || calm ? answered : acked + 1 + random.nextInt(answered - acked);
            trace.append("acknowledged to ").append(acked).append('\n');
        }

        private static String ids(Layout l) {
            StringBuilder out = new StringBuilder();
            for (Segment s : l.activeSegments()) {
                out.append(s.id()).append(s.range()).append(' ');
            }
            return out.toString().trim();
        }

        private void store(List<SourcePosition> there, Unit u, int entry) {
            there.add(u.position());
            stored.get(entry).add(new Stored(u.range(), u.position().isWhole()));
        }

        /** What a session opened on {@code segment} reads of its ancestors. */
        private SealedLineage lineage(Segment segment) {
            Layout now = layout;
            return SealedLineage.walk(segment, now::segment, source, SealedTails.MAX_ANCESTORS, s -> {
                List<SourcePosition> there = topic.getOrDefault(s.id(), List.of());
                // the broker's last snapshot may lag its last few entries: those are the tail read after it
                int tail = Math.min(there.size(), random.nextInt(3));
                Optional<SourcePosition> highest = there.size() == tail ? Optional.empty()
                        : Optional.of(there.get(there.size() - tail - 1));
                Set<SourcePosition> wholes = new TreeSet<>();
                there.subList(there.size() - tail, there.size()).stream().filter(SourcePosition::isWhole)
                        .forEach(wholes::add);
                return Mono.just(new Ancestor(s.id(), s.range(), s.parentIds(), highest, wholes, true));
            }).block();
        }

        private record Unit(Segment segment, SourcePosition position, HashRange range) {
        }

        /** How the replicator sends entry {@code i} by {@code known}: whole where it fits, else a part per segment. */
        private List<Unit> units(int i, Layout known) {
            SourcePosition whole = SourcePosition.of(1, i);
            if (point[i] >= 0) {
                return List.of(new Unit(known.activeSegmentFor(point[i]), whole, HashRange.of(point[i], point[i])));
            }
            Segment covering = known.activeSegmentFor(source.start());
            if (covering.range().contains(source)) {
                return List.of(new Unit(covering, whole, source));
            }
            List<Unit> parts = new ArrayList<>();
            for (Segment s : known.activeSegments()) {
                if (s.range().overlaps(source)) {
                    HashRange cut = HashRange.of(Math.max(s.range().start(), source.start()),
                            Math.min(s.range().end(), source.end()));
                    parts.add(new Unit(s, whole.withPart(parts.size()), cut));
                }
            }
            return parts;
        }

        /** A split of a random active segment, or a merge of two adjacent ones. */
        private void change() {
            List<Segment> active = layout.activeSegments();
            Segment s = active.get(random.nextInt(active.size()));
            boolean split = random.nextBoolean() && s.range().size() > 4;
            int at = active.indexOf(s);
            if (!split && at + 1 >= active.size()) {
                return;
            }
            Outcome outcome = layout.apply(split ? Mutation.split(s.id()) : Mutation.merge(s.id(),
                    active.get(at + 1).id()), layout.epoch(), 0);
            if (outcome instanceof Outcome.Applied applied) {
                layout = applied.layout();
                trace.append(" layout now ").append(ids(layout)).append('\n');
            }
        }

        /** Whether what is stored of entry {@code i} holds all its messages: its point, or the source range. */
        private boolean complete(int i) {
            return covered(i, point[i] >= 0 ? HashRange.of(point[i], point[i]) : source);
        }

        /** Whether what is stored of entry {@code i} holds its messages in {@code range}. */
        private boolean covered(int i, HashRange range) {
            List<HashRange> sorted = new ArrayList<>(stored.get(i).stream().map(Stored::range).toList());
            sorted.sort(null);
            int upTo = range.start() - 1;
            for (HashRange r : sorted) {
                if (r.start() <= upTo + 1 && r.end() > upTo) {
                    upTo = r.end();
                }
            }
            return upTo >= range.end();
        }

        private static boolean repeated(List<Stored> ranges) {
            for (int a = 0; a < ranges.size(); a++) {
                for (int b = a + 1; b < ranges.size(); b++) {
                    if (ranges.get(a).range().overlaps(ranges.get(b).range())) {
                        return true;
                    }
                }
            }
            return false;
        }
    }
}
