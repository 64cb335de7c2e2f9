package io.verbatim.metadatalog.raft;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
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

    /** One random for the load and the latencies, as this test has always drawn them. */
    private static LatencyNetwork network(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        return new LatencyNetwork(Harness.group(VOTERS, LISTENERS), random, random);
    }

    @Test
    void onALossFreeNetworkEachEntryGoesToEachMemberExactlyOnce() {
        for (long s = 1; s <= 20; s++) {
            long seed = s;
            LatencyNetwork net = network(seed);
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
            LatencyNetwork net = network(seed);
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
