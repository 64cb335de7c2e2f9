package io.verbatim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.entry.Entry;
import io.verbatim.pipeline.StoredEntry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

class SlowPathBenchTest {
    /** A round checks that both sides stored the same bytes; it throws if they did not. */
    @Test
    void bothSidesStoreTheSameParts() throws Exception {
        try (Bench bench = SlowPathBench.ratios(20, quiet())) {
            assertThat(bench.specs()).containsExactly(SlowPathBench.P3);
            for (int round = 0; round < 2; round++) {
                List<Row.Sample> samples = bench.round(round);
                assertThat(samples).hasSize(1);
                assertThat(samples.get(0).numerator()).isFinite().isPositive();
                assertThat(samples.get(0).denominator()).isFinite().isPositive();
            }
        }
    }

    /** Every source entry straddles the remote's buckets: more parts than entries, valid ones, no message lost. */
    @Test
    void theBareLoopSplitsEveryEntryIntoValidParts() {
        List<StoredEntry> stored = PipelineBench.load(PipelineBench.workload(5), Schedulers.immediate()).log(0)
                .entries();
        Map<Long, List<ByteBuffer>> logs = new TreeMap<>();
        SlowPathBench.bare(stored, logs);
        List<Entry> parts = logs.values().stream().flatMap(List::stream).map(Entry::parse).toList();
        assertThat(parts).hasSizeGreaterThan(5);
        assertThat(parts).allSatisfy(p -> assertThat(p.isReplicated()).isTrue());
        assertThat(parts.stream().mapToInt(p -> p.metadata().getNumMessagesInBatch()).sum()).isEqualTo(500);
    }

    private static PrintStream quiet() {
        return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    }
}
