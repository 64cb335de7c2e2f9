package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.net.Admission.Decision;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Who of a port's connections stays: authenticated peers are never starved. */
class AdmissionTest {
    /** 4 connections per port, 2 not yet authenticated per address. */
    private static final NetworkLimits LIMITS = NetworkLimits.defaults().withMaxConnectionsPerPort(4)
            .withMaxConnectionsPerAddress(2);

    @Test
    void anAddressHoldingItsShareOfUnauthenticatedConnectionsIsRefusedAndAnAuthenticatedOneFreesItsShare() {
        Admission<String> a = new Admission<>(LIMITS);
        assertThat(a.open("x1", "10.0.0.1").decision()).isEqualTo(Decision.ADMIT);
        assertThat(a.open("x2", "10.0.0.1").decision()).isEqualTo(Decision.ADMIT);
        assertThat(a.open("x3", "10.0.0.1").decision()).isEqualTo(Decision.REFUSE_ADDRESS_FULL);
        assertThat(a.open("y1", "10.0.0.2").decision()).as("another address").isEqualTo(Decision.ADMIT);
        a.authenticated("x1");
        assertThat(a.open("x3", "10.0.0.1").decision()).isEqualTo(Decision.ADMIT);
        assertThat(a.unauthenticatedFrom("10.0.0.1")).isEqualTo(2);
    }

    @Test
    void aFullPortMakesRoomByClosingItsOldestUnauthenticatedConnection() {
        Admission<String> a = new Admission<>(LIMITS);
        a.open("idle1", "10.0.0.2");
        a.open("peer", "10.0.0.1");
        a.authenticated("peer");
        a.open("idle2", "10.0.0.3");
        a.open("idle3", "10.0.0.3");
        Admission.Outcome<String> next = a.open("peer2", "10.0.0.1");
        assertThat(next.decision()).isEqualTo(Decision.ADMIT_EVICTING_OLDEST);
        assertThat(next.evicted()).isEqualTo("idle1");
        assertThat(a.open()).isEqualTo(4);
        a.closed("idle1"); // its close arrives after the eviction: counted once
        assertThat(a.open()).isEqualTo(4);
    }

    @Test
    void aNewConnectionIsRefusedForRoomOnlyWhenEveryConnectionAuthenticated() {
        Admission<String> a = new Admission<>(LIMITS);
        for (int i = 0; i < 4; i++) {
            a.open("peer" + i, "10.0.0." + i);
            a.authenticated("peer" + i);
        }
        assertThat(a.open("late", "10.0.0.9").decision()).isEqualTo(Decision.REFUSE_PORT_FULL);
        a.closed("peer0");
        assertThat(a.open("late", "10.0.0.9").decision()).isEqualTo(Decision.ADMIT);
    }

    /**
     * Random opens, authentications and closes from a few addresses: the port never holds more than its limit,
     * no address more than its share of unauthenticated connections, an authenticated connection is never
     * evicted, and a connection is refused for room only when every connection authenticated.
     */
    @Test
    void theLimitsHoldAndAuthenticatedConnectionsAreNeverEvictedUnderAnySequence() {
        long seed = System.nanoTime();
        System.out.println("AdmissionTest seed " + seed);
        Random random = new Random(seed);
        for (int run = 0; run < 200; run++) {
            Admission<Integer> a = new Admission<>(LIMITS);
            List<Integer> open = new ArrayList<>();
            Set<Integer> authenticated = new HashSet<>();
            for (int step = 0, next = 0; step < 200; step++) {
                int op = random.nextInt(3);
                if (op == 0 || open.isEmpty()) {
                    int c = next++;
                    int unauthenticatedBefore = open.size() - authenticated.size();
                    Admission.Outcome<Integer> o = a.open(c, "10.0.0." + random.nextInt(3));
                    if (o.evicted() != null) {
                        assertThat(authenticated).as("seed %d", seed).doesNotContain(o.evicted());
                        open.remove(o.evicted());
                    }
                    if (o.decision() == Decision.REFUSE_PORT_FULL) {
                        assertThat(unauthenticatedBefore).as("seed %d", seed).isZero();
                    }
                    if (o.decision() == Decision.ADMIT || o.decision() == Decision.ADMIT_EVICTING_OLDEST) {
                        open.add(c);
                    }
                } else if (op == 1) {
                    int c = open.get(random.nextInt(open.size()));
                    a.authenticated(c);
                    authenticated.add(c);
                } else {
                    Integer c = open.remove(random.nextInt(open.size()));
                    a.closed(c);
                    authenticated.remove(c);
                }
                assertThat(a.open()).as("seed %d", seed).isEqualTo(open.size()).isLessThanOrEqualTo(4);
                assertThat(a.unauthenticated()).as("seed %d", seed).isEqualTo(open.size() - authenticated.size());
                for (int i = 0; i < 3; i++) {
                    assertThat(a.unauthenticatedFrom("10.0.0." + i)).as("seed %d", seed).isLessThanOrEqualTo(2);
                }
            }
        }
    }
}
