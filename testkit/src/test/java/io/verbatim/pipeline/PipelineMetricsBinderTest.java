package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PipelineMetricsBinderTest {

    @Test
    void exportsEntriesAndBytesByPathAndTheBacklog() {
        Layout one = Layout.initial(1, 4, 0);
        Fixture f = new Fixture(one, one.apply(Mutation.rebucket(0, 64), 0, 0).layoutOrThrow());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new PipelineMetricsBinder(f.metrics, "a", f.a.topic(), "b", "0000-ffff-0",
                () -> f.a.log(0).existingCursor("pulsar.repl.b").orElseThrow().backlog()).bindTo(registry);
        f.produce(0, 100, 40, Compression.LZ4);
        assertThat(registry.get(PipelineMetricsBinder.BACKLOG).gauge().value()).isPositive();
        f.replicator(0).run().subscribe();
        f.advance(Duration.ofSeconds(1));
        double verbatim = registry.get(PipelineMetricsBinder.ENTRIES).tag("path", "verbatim").functionCounter().count();
        double rebatched = registry.get(PipelineMetricsBinder.ENTRIES).tag("path", "rebatched").functionCounter()
                .count();
        assertThat(verbatim + rebatched).isEqualTo(f.a.log(0).size());
        assertThat(rebatched).as("N=64 at b cuts some of a's N=4 batches").isPositive();
        assertThat(registry.get(PipelineMetricsBinder.BYTES).tag("path", "verbatim").functionCounter().count())
                .isEqualTo(f.metrics.verbatimBytes());
        assertThat(registry.get(PipelineMetricsBinder.BACKLOG).tag("remote_cluster", "b").gauge().value()).isZero();
    }
}
