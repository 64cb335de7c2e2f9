package io.verbatim.examples;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * The fault suite on the embedded storage: each node keeps its segments in its own process and in its data
 * directory (a journal of every change, checkpoints in {@code state.pb}).
 */
class EmbeddedFaultSuiteTest extends FaultScenarios {

    @Override
    String label() {
        return "embedded";
    }

    @Override
    FaultSuite.Storage storage() {
        return new FaultSuite.Storage.Embedded();
    }

    @Override
    @Test
    @Order(5)
    @Disabled("issue 23 item 13: a replication session on a half-open connection is not noticed within the send "
            + "timeout: us-east<->ap-south kept backlogs of 24-131 for 30 s after the heal in 2 of 4 runs (seed 2315), "
            + "and once drained about 60 s after the cut, the idle timeout")
    void halfOpenConnectionsLoseNothingAndEveryDirectionDrains() throws Exception {
        super.halfOpenConnectionsLoseNothingAndEveryDirectionDrains();
    }

    @Override
    @Test
    @Order(9)
    void aNodeKilledWithSigkillAndRestartedLosesNothingAcknowledged() throws Exception {
        super.aNodeKilledWithSigkillAndRestartedLosesNothingAcknowledged();
    }
}
