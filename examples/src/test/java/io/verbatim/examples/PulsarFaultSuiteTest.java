package io.verbatim.examples;

import io.verbatim.pulsar.broker.PulsarProcess;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * The fault suite on Pulsar: one broker (a child process) for the three clusters, each in a namespace of its
 * own. A replicator publishes into its peer's namespace on that broker directly, as Pulsar's geo-replicator
 * does, so the links between the nodes carry the exchange and the layout streams here, not the entries; the
 * process faults hit everything a node does.
 */
class PulsarFaultSuiteTest extends FaultScenarios {
    private @Nullable PulsarProcess broker;

    @Override
    String label() {
        return "pulsar";
    }

    @Override
    FaultSuite.Storage storage() {
        broker = PulsarProcess.start(PulsarProcess.Options.of(dir.resolve("pulsar")));
        return new FaultSuite.Storage.OnPulsar(broker.serviceUrl(), broker.webUrl(),
                "faults-" + ProcessHandle.current().pid());
    }

    /**
     * Patient calls: a node on Pulsar whose produce call is abandoned by its client refuses every later call (see
     * the scenario below), so here only that scenario abandons calls.
     */
    @Override
    Duration callTimeout() {
        return Duration.ofSeconds(30);
    }

    /**
     * No splits during the other faults, for now: on Pulsar a split while producing can store messages twice and
     * leave a direction with a backlog for good (the splits scenario below); {@code -Dverbatim.faults.splits=true}
     * puts them back.
     */
    @Override
    boolean splitsDuringFaults() {
        return false;
    }

    @Override
    void stopStorage() {
        if (broker != null) {
            broker.close();
        }
    }

    @Override
    @Test
    @Order(0)
    @Disabled("found by this suite, not in issue 23, 1 run in 6: on Pulsar, concurrent splits on us-east and eu-west "
            + "while producing (seed 2315, the warm-up) left 3 acknowledged messages of us-east stored twice on us-east "
            + "itself and on ap-south (us-east/265, 267, 268; a produce call sent again whole after a seal?), 9 missing "
            + "on eu-west, and us-east->eu-west at backlog 14 for 30 s after the traffic stopped")
    void concurrentSplitsOnTwoClustersWhileProducingLoseNothing() throws Exception {
        super.concurrentSplitsOnTwoClustersWhileProducingLoseNothing();
    }

    @Override
    @Test
    @Order(6)
    @Disabled("found by this suite, not in issue 23: on Pulsar, a produce call abandoned by its client while the "
            + "segment's producer is being made (the first call after a split) leaves the node answering every later "
            + "produce call 503 'cluster X is stopping: nothing was stored' while it is not stopping, until it restarts")
    void produceCallsAbandonedByTheirClientLeaveTheNodeProducingAndLoseNothing() throws Exception {
        super.produceCallsAbandonedByTheirClientLeaveTheNodeProducingAndLoseNothing();
    }
}
