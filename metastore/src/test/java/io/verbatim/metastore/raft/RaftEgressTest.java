package io.verbatim.metastore.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.metastore.proto.AppendResult;
import io.verbatim.metastore.proto.RaftMessageProto;
import io.verbatim.metastore.proto.RaftPeerRole;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The leader's egress: on a network that loses nothing and keeps each pair's order (as TCP does), every
 * entry goes to every member exactly once, whatever the heartbeats in flight meanwhile; after a real
 * rejection (an append lost), the entries from the lost one on go once more, not once per heartbeat or
 * per stale rejection.
 */
class RaftEgressTest {
    private static final List<String> VOTERS = List.of("n1", "n2", "n3");
    private static final List<String> LISTENERS = List.of("l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10",
            "l11", "l12");

    /**
     * Time in ticks over the harness: each pair of members has its own latency of 1 to 3 ticks (so a round
     * trip spans several heartbeats and pairs answer at different times), order kept per pair, nothing
     * lost unless {@code lose} says so.
     */
    private static final class LatencyNetwork {
        record InFlight(long at, long seq, RaftMessageProto message) {
        }

        final Harness h = Harness.group(VOTERS, LISTENERS);
        final SplittableRandom random;
        final Map<String, Integer> latency = new TreeMap<>();
        final PriorityQueue<InFlight> queue = new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at)
                : Long.compare(a.seq, b.seq));
        final List<RaftMessageProto> delivered = new ArrayList<>();
        Predicate<RaftMessageProto> lose = m -> false;
        long now;
        long seq;

        LatencyNetwork(long seed) {
            random = new SplittableRandom(seed);
        }

        /** One tick: the ticked members tick, then every message due is delivered, in order. */
        void tick(List<String> ticked) {
            now++;
            for (String id : ticked) {
                h.tick(id, 1);
            }
            post();
            while (!queue.isEmpty() && queue.peek().at <= now) {
                RaftMessageProto m = queue.poll().message;
                String to = Transcript.to(m);
                delivered.add(m);
                h.node(to).step(m);
                h.drive(to);
                post();
            }
        }

        void tickAll() {
            tick(List.copyOf(h.nodes.keySet()));
        }

        /** Moves what the members sent onto the wire. */
        void post() {
            while (!h.inflight.isEmpty()) {
                RaftMessageProto m = h.inflight.pollFirst();
                if (lose.test(m)) {
                    continue;
                }
                String pair = Transcript.from(m) + ">" + Transcript.to(m);
                int ticks = latency.computeIfAbsent(pair, k -> 1 + random.nextInt(3));
                queue.add(new InFlight(now + ticks, seq++, m));
            }
        }

        /** n1 campaigns alone (the others do not tick) until it leads; then everyone ticks. */
        void electN1() {
            for (int i = 0; i < 100 && h.status("n1").role() != RaftPeerRole.LEADER; i++) {
                tick(List.of("n1"));
            }
            assertThat(h.status("n1").role()).isEqualTo(RaftPeerRole.LEADER);
        }

        /** Proposals for {@code ticks} ticks: none, one, or a burst of up to 20 at each, drawn from the seed. */
        void load(int ticks) {
            for (int t = 0; t < ticks; t++) {
                int draw = random.nextInt(10);
                int proposals = draw < 3 ? 0 : draw < 8 ? 1 : 2 + random.nextInt(19);
                for (int i = 0; i < proposals; i++) {
                    h.propose("n1", "e" + t + "." + i);
                }
                tickAll();
            }
        }

        /** Ticks until nothing is in flight and every member holds the leader's log. */
        void settle() {
            for (int i = 0; i < 200 && !(queue.isEmpty() && caughtUp()); i++) {
                tickAll();
            }
            assertThat(caughtUp()).as("every member caught up").isTrue();
        }

        boolean caughtUp() {
            long last = h.status("n1").lastIndex();
            return h.nodes.keySet().stream().allMatch(id -> h.status(id).lastIndex() == last
                    && h.status(id).commitIndex() == last);
        }

        /** For each member, how many times n1 sent it each index in an AppendEntries. */
        Map<String, TreeMap<Long, Integer>> copies() {
            Map<String, TreeMap<Long, Integer>> out = new TreeMap<>();
            for (RaftMessageProto m : h.sent) {
                if (m.hasAppendEntries() && Transcript.from(m).equals("n1")) {
                    TreeMap<Long, Integer> perIndex = out.computeIfAbsent(Transcript.to(m), k -> new TreeMap<>());
                    m.getAppendEntries().getEntriesList().forEach(e -> perIndex.merge(e.getIndex(), 1, Integer::sum));
                }
            }
            return out;
        }

        long rejections() {
            return delivered.stream().filter(m -> m.hasAppendEntriesReply()
                    && m.getAppendEntriesReply().getResult() != AppendResult.SUCCESS).count();
        }
    }

    @Test
    void onALossFreeNetworkEachEntryGoesToEachMemberExactlyOnce() {
        for (long s = 1; s <= 20; s++) {
            long seed = s;
            LatencyNetwork net = new LatencyNetwork(seed);
            net.electN1();
            net.load(60);
            net.settle();
            long last = net.h.status("n1").lastIndex();
            assertThat(net.h.status("n1").term()).as("seed %d: one leader throughout", seed).isEqualTo(1);
            Map<String, TreeMap<Long, Integer>> copies = net.copies();
            long sent = copies.values().stream().flatMap(c -> c.values().stream()).mapToLong(Integer::longValue).sum();
            assertThat(sent).as("seed %d: entry copies sent for %d entries to %d members (%d rejections)", seed, last,
                    copies.size(), net.rejections()).isEqualTo(last * (VOTERS.size() - 1 + LISTENERS.size()));
            assertThat(copies.keySet()).as("seed %d", seed).hasSize(VOTERS.size() - 1 + LISTENERS.size());
            copies.forEach((peer, perIndex) -> {
                assertThat(perIndex.keySet()).as("seed %d: %s got every index", seed, peer).hasSize((int) last);
                assertThat(perIndex.entrySet().stream().filter(e -> e.getValue() != 1).toList())
                        .as("seed %d: indexes sent to %s more than once (index=copies)", seed, peer).isEmpty();
            });
            assertThat(net.rejections()).as("seed %d: no append is ever rejected", seed).isZero();
        }
    }

    @Test
    void afterOneLostAppendTheEntriesFromItOnGoOnceMore() {
        for (long s = 1; s <= 20; s++) {
            long seed = s;
            LatencyNetwork net = new LatencyNetwork(seed);
            net.electN1();
            net.load(20);
            boolean[] lost = {false};
            net.lose = m -> {
                if (!lost[0] && m.hasAppendEntries() && m.getAppendEntries().getEntriesCount() > 0
                        && Transcript.to(m).equals("l1")) {
                    lost[0] = true;
                    return true;
                }
                return false;
            };
            net.load(40);
            net.settle();
            assertThat(lost[0]).isTrue();
            assertThat(net.h.status("n1").term()).as("seed %d: one leader throughout", seed).isEqualTo(1);
            long last = net.h.status("n1").lastIndex();
            Map<String, TreeMap<Long, Integer>> copies = net.copies();
            long sent = copies.values().stream().flatMap(c -> c.values().stream()).mapToLong(Integer::longValue).sum();
            long toL1 = copies.get("l1").values().stream().mapToLong(Integer::longValue).sum();
            assertThat(sent - toL1).as("seed %d: entry copies sent to the others for %d entries", seed, last)
                    .isEqualTo(last * (VOTERS.size() - 2 + LISTENERS.size()));
            assertThat(toL1).as("seed %d: entry copies sent to l1 for %d entries", seed, last).isLessThanOrEqualTo(2 * last);
            copies.forEach((peer, perIndex) -> {
                assertThat(perIndex.keySet()).as("seed %d: %s got every index", seed, peer).hasSize((int) last);
                int most = peer.equals("l1") ? 2 : 1;
                assertThat(perIndex.entrySet().stream().filter(e -> e.getValue() > most).toList())
                        .as("seed %d: indexes sent to %s more than %d times (index=copies)", seed, peer, most).isEmpty();
            });
        }
    }
}
