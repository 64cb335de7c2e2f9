package io.verbatim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/** What the checks make of data no origin produced: a failed check naming it, never a crash. */
class ReplicationRecorderTest {
    private final MemorySegments cluster = new MemorySegments("a", Layout.initial(1, 1, 0), Schedulers.immediate());
    private final ReplicationRecorder recorder = ReplicationRecorder.attach(Map.of("a", cluster), true);

    private void produce(String payload) {
        cluster.produce(List.of(Message.of("k", payload.getBytes(StandardCharsets.UTF_8))), Compression.NONE);
    }

    private ReplicationChecks.Check foreignCheck(Map<String, Long> produced) {
        return recorder.checks(produced).stream().filter(c -> c.name().equals("only produced messages stored"))
                .findFirst().orElseThrow();
    }

    @Test
    void producedMessagesPass() {
        produce("a/0");
        assertThat(foreignCheck(Map.of("a", 1L)).passed()).isTrue();
    }

    @Test
    void aPayloadThatIsNotOriginSlashCounterFailsNamingWhatWasFound() {
        produce("a/0");
        produce("hello world");
        produce("a/99999999999999");
        ReplicationChecks.Check c = foreignCheck(Map.of("a", 1L));
        assertThat(c.passed()).isFalse();
        assertThat(c.detail()).contains("not origin/counter: 'hello world'");
    }

    @Test
    void anUnknownOriginFailsNamingIt() {
        produce("a/0");
        produce("mallory/0");
        ReplicationChecks.Check c = foreignCheck(Map.of("a", 1L));
        assertThat(c.passed()).isFalse();
        assertThat(c.detail()).contains("unknown origin 'mallory'");
        assertThat(recorder.checks(Map.of("a", 1L))).filteredOn(x -> x.name().equals("every message on every cluster"))
                .allMatch(ReplicationChecks.Check::passed);
    }
}
