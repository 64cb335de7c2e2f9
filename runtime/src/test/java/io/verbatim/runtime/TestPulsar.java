package io.verbatim.runtime;

import io.verbatim.pulsar.broker.PulsarProcess;
import java.nio.file.Path;

/** One Pulsar broker (a child process) per test JVM for this module's Pulsar tests, stopped at exit. */
final class TestPulsar {
    private static PulsarProcess shared;

    private TestPulsar() {
    }

    static synchronized PulsarProcess broker() {
        if (shared == null) {
            Path data = Path.of("target", "pulsar-runtime-" + ProcessHandle.current().pid()).toAbsolutePath();
            PulsarProcess started = PulsarProcess.start(PulsarProcess.Options.of(data));
            Runtime.getRuntime().addShutdownHook(new Thread(started::close, "pulsar-runtime-broker-stop"));
            shared = started;
        }
        return shared;
    }
}
