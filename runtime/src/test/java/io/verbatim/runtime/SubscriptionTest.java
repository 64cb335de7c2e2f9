package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SubscriptionTest {

    /** Every bucket to the consumer whose range {@code [⌊j·N/k⌋, ⌊(j+1)·N/k⌋)} holds it, as Pulsar's selector. */
    @Test
    void bucketsGoToTheConsumerWhoseRangeHoldsThemForEveryBucketAndConsumerCount() {
        for (int n = 1; n <= 128; n++) {
            for (int k = 1; k <= 12; k++) {
                for (int b = 0; b < n; b++) {
                    int owner = -1;
                    for (int j = 0; j < k; j++) {
                        if ((long) j * n / k <= b && b < (long) (j + 1) * n / k) {
                            owner = j;
                        }
                    }
                    assertThat(Subscription.consumerOf(b, n, k)).as("bucket %d of %d, %d consumers", b, n, k)
                            .isEqualTo(owner);
                }
            }
        }
        // Fewer buckets than consumers: bucket 0 of 1 goes to the last of three (the others own nothing).
        assertThat(Subscription.consumerOf(0, 1, 3)).isEqualTo(2);
    }
}
