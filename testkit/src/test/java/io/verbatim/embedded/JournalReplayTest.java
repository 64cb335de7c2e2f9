package io.verbatim.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.testkit.ManualJournal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * A journaled cluster that crashes at any point comes back, from any earlier checkpoint and the records the
 * journal made durable after it, as it was at the crash: the same entries at the same positions, cursors,
 * ledgers, layout and deduplication marks. And a segment reopened after the crash never hands out a position
 * it handed out before. Seeded: {@code -Dverbatim.seed=N} replays one case, {@code -Dverbatim.cases=N} runs more.
 */
class JournalReplayTest {
    private static final String TOPIC = "persistent://public/default/t";
    private static final long LEDGER_FLOOR = 1_000;

    @Test
    void aCrashAtAnyDurablePointRecoversExactlyWhatWasDurable() {
        long first = Long.getLong("verbatim.seed", 0x70_0001L);
        int cases = Integer.getInteger("verbatim.cases", 300 * Integer.getInteger("verbatim.scale", 1));
        for (int i = 0; i < cases; i++) {
            long seed = first + i;
            try {
                runOne(seed);
            } catch (Throwable t) {
                throw new AssertionError("seed " + seed + " failed (replay with -Dverbatim.seed=" + seed
                        + " -Dverbatim.cases=1): " + t.getMessage(), t);
            }
        }
    }

    private static void runOne(long seed) {
        Random r = new Random(seed);
        ManualJournal journal = new ManualJournal();
        LedgerIds.Counter ledgers = LedgerIds.fromFloor(LEDGER_FLOOR);
        MemorySegments live = new MemorySegments("east", TOPIC, Layout.initial(1 + r.nextInt(2), 4, 0),
                Schedulers.immediate(), journal, ledgers);
        live.replicateTo("west", StartAt.EARLIEST);
        Traffic traffic = new Traffic(live, r);
        Map<Long, Durable> bySequence = new TreeMap<>();
        List<MemorySegments.Checkpoint> checkpoints = new ArrayList<>();
        bySequence.put(journal.lastSequence(), Durable.of(live.image()));
        int ops = 20 + r.nextInt(120);
        for (int op = 0; op < ops; op++) {
            traffic.step();
            if (r.nextInt(3) == 0) {
                journal.flush();
            }
            if (r.nextInt(12) == 0) {
                checkpoints.add(live.checkpoint());
            }
            bySequence.put(journal.lastSequence(), Durable.of(live.image()));
        }
        long cut = journal.durableSequence(); // what survived the crash
        MemorySegments.Checkpoint base = checkpoints.isEmpty() || r.nextInt(4) == 0 ? null
                : checkpoints.get(r.nextInt(checkpoints.size()));
        long from = base == null ? 1 : base.sequence(); // without a checkpoint, from the record that created it
        ClusterImage image = base == null ? MemorySegments.createdImage(
                (Journal.Record.TopicCreated) journal.between(0, 1).get(0)) : base.image();
        ManualJournal after = new ManualJournal();
        LedgerIds.Counter recoveredLedgers = LedgerIds.fromFloor(LEDGER_FLOOR);
        MemorySegments recovered = MemorySegments.restore("east", TOPIC, image, Schedulers.immediate(), after,
                recoveredLedgers);
        if (cut > from) {
            journal.between(from, cut).forEach(recovered::replay);
        }
        assertThat(after.lastSequence()).as("a replay writes nothing down again").isZero();
        Durable expected = bySequence.get(Math.max(from, cut));
        assertThat(Durable.of(recovered.image())).isEqualTo(expected);

        maxLedger(recovered.image()).ifPresent(recoveredLedgers::atLeast);
        recovered.reopen();
        recovered.replicateTo("west", StartAt.EARLIEST);
        checkNoPositionReused(recovered, live);
    }

    /** Every open segment writes on in a ledger above every ledger it had, live or recovered. */
    private static void checkNoPositionReused(MemorySegments recovered, MemorySegments live) {
        for (Segment s : recovered.layout().activeSegments()) {
            SourcePosition at = recovered.append(s.id(), Entries.batch(MessageMetadata.newBuilder().setProducerName("p")
                    .setSequenceId(0).setPublishTime(0).build(), List.of(Message.of("k", new byte[] {1})),
                    CompressionType.NONE));
            for (ClusterImage.SegmentImage seg : live.image().segments()) {
                if (seg.segmentId() == s.id()) {
                    assertThat(at.ledgerId()).as("segment %s's new entry %s", s.id(), at)
                            .isGreaterThan(seg.ledgers().get(seg.ledgers().size() - 1).ledgerId());
                }
            }
        }
    }

    private static OptionalLong maxLedger(ClusterImage image) {
        return image.segments().stream().flatMap(s -> s.ledgers().stream()).mapToLong(ClusterImage.Ledger::ledgerId)
                .max();
    }

    /** What a journal must keep of an image: not what is in flight, nor the state of sessions a crash ends. */
    private record Durable(Layout layout, List<Seg> segments, Map<String, SourcePosition> marks, long sequence) {
        static Durable of(ClusterImage image) {
            List<Seg> segments = image.segments().stream().map(s -> new Seg(s.segmentId(), s.firstEntryId(),
                    s.sealed(), s.entries().stream().map(b -> {
                        byte[] bytes = new byte[b.remaining()];
                        b.duplicate().get(bytes);
                        return new String(bytes, StandardCharsets.ISO_8859_1);
                    }).toList(), new TreeMap<>(s.cursors()), s.ledgers())).toList();
            Map<String, SourcePosition> marks = new TreeMap<>();
            image.destinations().forEach((k, d) -> d.persisted().ifPresent(p -> marks.put(k, p)));
            return new Durable(image.layout(), segments, marks, image.sequence());
        }
    }

    private record Seg(long id, long first, boolean sealed, List<String> entries, Map<String, Long> cursors,
            List<ClusterImage.Ledger> ledgers) {
    }

    /** Random changes of every kind the journal writes down. */
    private static final class Traffic {
        private final MemorySegments c;
        private final Random r;
        private final Map<String, Long> nextPosition = new TreeMap<>();
        private final Map<String, long[]> sessions = new TreeMap<>();
        private int produced;

        Traffic(MemorySegments c, Random r) {
            this.c = c;
            this.r = r;
        }

        void step() {
            switch (r.nextInt(10)) {
                case 0, 1, 2 -> produce();
                case 3, 4 -> ingest();
                case 5 -> acknowledge();
                case 6 -> openOrRemoveCursor();
                case 7 -> changeLayout();
                case 8 -> prune();
                default -> resetMark();
            }
        }

        private void produce() {
            List<Message> messages = new ArrayList<>();
            for (int i = 0, n = 1 + r.nextInt(4); i < n; i++) {
                messages.add(Message.of("k" + r.nextInt(20), ("east/" + produced++).getBytes(StandardCharsets.UTF_8)));
            }
            c.produce(messages, Compression.values()[r.nextInt(Compression.values().length)]);
        }

        private void ingest() {
            List<Segment> active = c.layout().activeSegments();
            Segment into = r.nextInt(5) == 0 ? pick(new ArrayList<>(c.layout().segments().values())) : pick(active);
            String producer = "pulsar.repl.west." + r.nextInt(3);
            String key = into.id() + "/" + producer;
            long[] session = sessions.computeIfAbsent(key, k -> new long[] {c.newSessionId(), 0});
            if (r.nextInt(6) == 0) {
                session[0] = c.newSessionId();
                session[1] = 0;
            }
            long next = nextPosition.getOrDefault(producer, 0L);
            long entry = r.nextInt(4) == 0 && next > 0 ? next - 1 - r.nextInt((int) Math.min(next, 3)) : next; // repeats
            SourcePosition position = SourcePosition.of(7, entry);
            Entry e = Entries.batch(MessageMetadata.newBuilder().setProducerName("w").setSequenceId(entry)
                    .setPublishTime(0).build(), List.of(Message.of("k" + r.nextInt(20),
                            ("west/" + entry).getBytes(StandardCharsets.UTF_8))), CompressionType.NONE)
                    .restamp(new ReplicationStamp("west", position));
            try {
                c.ingest(into.id(), producer, session[0], session[1]++, position, e);
                nextPosition.put(producer, Math.max(next, entry + 1));
            } catch (RemoteException refused) {
                session[0] = c.newSessionId(); // the session is over: the sender opens another
                session[1] = 0;
            }
        }

        private void acknowledge() {
            MemorySegmentLog log = pickLog();
            List<String> names = new ArrayList<>(log.cursors().keySet());
            List<StoredEntry> visible = log.entries();
            if (names.isEmpty() || visible.isEmpty()) {
                return;
            }
            log.existingCursor(pick(names)).orElseThrow().acknowledge(pick(visible).position()).block();
        }

        private void openOrRemoveCursor() {
            String name = "sub-" + r.nextInt(2);
            if (r.nextBoolean()) {
                pickLog().openCursor(name, r.nextBoolean() ? StartAt.EARLIEST : StartAt.LATEST);
            } else {
                c.removeCursor(name);
            }
        }

        private void changeLayout() {
            Segment s = pick(c.layout().activeSegments());
            if (c.layout().activeSegments().size() < 6 && s.range().size() > 1) {
                c.apply(r.nextBoolean() ? Mutation.split(s.id()) : Mutation.rebucket(s.id(), s.buckets().count() * 2));
            }
        }

        private void prune() {
            for (Segment s : c.layout().segments().values()) {
                if (s.isSealed() && s.parentIds().isEmpty()) {
                    c.prune(s.id(), 0);
                    return;
                }
            }
        }

        private void resetMark() {
            List<String> keys = new ArrayList<>(c.marks().keySet());
            if (!keys.isEmpty()) {
                String[] key = pick(keys).split("/", 2);
                c.resetMark(Long.parseLong(key[0]), key[1]);
            }
        }

        private MemorySegmentLog pickLog() {
            return c.log(pick(new ArrayList<>(c.layout().segments().values())).id());
        }

        private <T> T pick(List<T> list) {
            return list.get(r.nextInt(list.size()));
        }
    }
}
