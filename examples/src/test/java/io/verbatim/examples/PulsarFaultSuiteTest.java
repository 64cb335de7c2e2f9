package io.verbatim.examples;

import io.verbatim.pulsar.broker.PulsarProcess;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

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
     * Patient calls, as the table was measured: on one broker shared by three clusters a produce call may take
     * seconds while a segment's producer is made; the abandoned-calls scenario abandons calls on purpose.
     */
    @Override
    Duration callTimeout() {
        return Duration.ofSeconds(30);
    }

    @Override
    void stopStorage() {
        if (broker != null) {
            broker.close();
        }
    }
}
