package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LeaseTest {

    @Test
    void aLeaseRunsFromWhenTheReportWasSentLessTheMarginAndNeverShrinksByALateAnswer() {
        Lease lease = new Lease(Duration.ofSeconds(10));
        assertThat(lease.holds(0)).as("nothing granted yet").isFalse();
        lease.granted(1_000, 7);
        assertThat(lease.holds(9_999)).isTrue();
        assertThat(lease.holds(10_000)).as("sent at 1 s + 10 s - the 1 s margin").isFalse();
        assertThat(lease.remaining(4_000)).isEqualTo(Duration.ofSeconds(6));
        lease.granted(500, 9);
        assertThat(lease.holds(9_999)).as("an older report's answer arriving late").isTrue();
        assertThat(lease.minEpoch()).isEqualTo(7);
    }

    @Test
    void itActsOnlyOnceItsReplicaHasAppliedWhatTheLeaderHadApplied() {
        Lease lease = new Lease(Duration.ofSeconds(4));
        lease.granted(0, 12);
        assertThat(lease.mayAct(100, 11)).isFalse();
        assertThat(lease.mayAct(100, 12)).isTrue();
        assertThat(lease.mayAct(3_000, 40)).as("past 4 s - the 1 s margin").isFalse();
    }

    @Test
    void theMarginIsATenthAtLeastASecondAndLessThanHalfAndAMarginAsLongAsTheLeaseIsRefused() {
        Lease thirty = new Lease(Duration.ofSeconds(30));
        thirty.granted(0, 0);
        assertThat(thirty.remaining(0)).isEqualTo(Duration.ofSeconds(27));
        Lease one = new Lease(Duration.ofMillis(1500));
        one.granted(0, 0);
        assertThat(one.remaining(0)).isEqualTo(Duration.ofMillis(750));
        assertThatThrownBy(() -> new Lease(Duration.ofSeconds(2), Duration.ofSeconds(2)))
                .hasMessage("a lease of PT2S with a margin of PT2S: expected a positive length and a margin shorter than it");
    }
}
