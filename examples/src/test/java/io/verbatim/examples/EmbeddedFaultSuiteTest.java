package io.verbatim.examples;

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
