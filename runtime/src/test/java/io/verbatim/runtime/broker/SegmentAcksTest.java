package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.entry.SourcePosition;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SegmentAcksTest {

    private static SourcePosition at(long entry) {
        return SourcePosition.of(7, entry);
    }

    @Test
    void anEntryReceivedOutOfTurnWaitsForEveryEntryBeforeIt() {
        SegmentAcks acks = new SegmentAcks();
        for (int i = 0; i < 4; i++) {
            acks.dispatched(at(i));
        }
        assertThat(acks.received(at(2))).isEmpty();
        assertThat(acks.received(at(1))).isEmpty();
        assertThat(acks.received(at(0))).contains(at(2));
        assertThat(acks.outstanding()).isEqualTo(1);
        assertThat(acks.awaits(at(3))).isTrue();
        assertThat(acks.received(at(3))).contains(at(3));
        assertThat(acks.outstanding()).isZero();
    }

    @Test
    void anEntryReceivedTwiceOrNeverDispatchedMovesNothing() {
        SegmentAcks acks = new SegmentAcks();
        acks.dispatched(at(0));
        acks.dispatched(at(1));
        assertThat(acks.received(at(1))).isEmpty();
        assertThat(acks.received(at(1))).isEmpty();
        assertThat(acks.received(at(9))).isEmpty();
        assertThat(acks.received(at(0))).contains(at(1));
        assertThat(acks.received(at(0))).isEmpty();
    }

    /** A read again from the mark-delete position gives entries already dispatched: they are not fresh. */
    @Test
    void whatWasDispatchedIsNotFreshAgainAndDispatchingItTwiceIsRefused() {
        SegmentAcks acks = new SegmentAcks();
        acks.dispatched(at(0));
        acks.dispatched(at(1));
        acks.received(at(0));
        assertThat(acks.fresh(at(0))).isFalse();
        assertThat(acks.fresh(at(1))).isFalse();
        assertThat(acks.fresh(at(2))).isTrue();
        assertThatThrownBy(() -> acks.dispatched(at(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("out of cursor order");
    }

    /** Property: whatever order k consumers receive in, the cursor only moves forward over received prefixes. */
    @Test
    void theAcknowledgementIsAlwaysTheLongestReceivedPrefix() {
        for (long seed = 0; seed < 500; seed++) {
            Random random = new Random(seed);
            int n = 1 + random.nextInt(40);
            SegmentAcks acks = new SegmentAcks();
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                acks.dispatched(at(i));
                order.add(i);
            }
            Collections.shuffle(order, random);
            boolean[] got = new boolean[n];
            long acked = -1;
            for (int i : order) {
                got[i] = true;
                Optional<SourcePosition> upTo = acks.received(at(i));
                int prefix = 0;
                while (prefix < n && got[prefix]) {
                    prefix++;
                }
                if (upTo.isPresent()) {
                    assertThat(upTo.get().entryId()).as("seed " + seed).isEqualTo(prefix - 1).isGreaterThan(acked);
                    acked = upTo.get().entryId();
                } else {
                    assertThat(acked).as("seed " + seed).isEqualTo(prefix - 1);
                }
            }
            assertThat(acked).as("seed " + seed).isEqualTo(n - 1);
            assertThat(acks.outstanding()).isZero();
        }
    }
}
