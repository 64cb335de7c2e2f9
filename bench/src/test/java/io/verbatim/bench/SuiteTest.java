package io.verbatim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SuiteTest {
    @Test
    void optionsParse() {
        Suite.Options o = Suite.Options.parse("--quick", "--only", "P1,P2", "--json=x/y.json", "--warmup", "0");
        assertThat(o.rounds()).isEqualTo(3);
        assertThat(o.warmUp()).isZero();
        assertThat(o.only()).containsExactly("P1", "P2");
        assertThat(o.json()).isEqualTo(Path.of("x/y.json"));
        assertThat(Suite.Options.parse().rounds()).isEqualTo(5);
        assertThat(Suite.Options.parse().warmUp()).isEqualTo(1);
        assertThatThrownBy(() -> Suite.Options.parse("--rounds", "0")).hasMessageContaining("--rounds");
        assertThatThrownBy(() -> Suite.Options.parse("--frobnicate")).hasMessageContaining("--frobnicate");
    }

    @Test
    void selectionByIdFamilyAndPulsar() {
        Suite.Options p1 = Suite.Options.parse("--only", "P1");
        assertThat(p1.selects(PipelineBench.P1, false)).isTrue();
        assertThat(p1.selects(PulsarBench.P1, true)).as("Pulsar needs --pulsar").isFalse();
        assertThat(Suite.Options.parse("--only", "P1", "--pulsar").selects(PulsarBench.P1, true)).isTrue();
        assertThat(Suite.Options.parse("--only", "P1/pulsar").selects(PulsarBench.P1, true)).as("named").isTrue();
        assertThat(Suite.Options.parse("--only", "P1/pulsar").selects(PipelineBench.P1, false)).isFalse();
        assertThat(Suite.Options.parse().selects(PulsarBench.P2, true)).isFalse();
        assertThat(Suite.Options.parse().selects(DelegationBench.P7_EGRESS, false)).isTrue();
    }

    @Test
    void aFamilyOfPulsarMeasuresOnlyIsRunWhenNamed() {
        Row.Spec kill = HandoverBench.SMALL.get(0);
        assertThat(Suite.Options.parse("--only", "handover100").selects(kill, true)).isTrue();
        assertThat(Suite.Options.parse("--only", "handover1000").selects(kill, true)).isFalse();
        assertThat(Suite.Options.parse("--only", "cpu").selects(ReplicationCpuBench.THREE, true)).isTrue();
        assertThat(Suite.Options.parse().selects(ReplicationCpuBench.THREE, true)).as("Pulsar needs --pulsar").isFalse();
        assertThat(Suite.Options.parse("--pulsar").selects(kill, true)).isTrue();
    }

    @Test
    void issue25sMeasuresHaveBenchmarks() {
        List<String> measured = Suite.catalog().stream().filter(e -> e.factory() != null && e.pulsar())
                .flatMap(e -> e.specs().stream()).map(Row.Spec::id).toList();
        assertThat(measured).contains("handover100/kill-p50", "handover100/drain-max", "handover1000/kill-p99",
                "cpu/2:1", "cpu/3:1", "cpu/pulsar-3:1", "cpu/net-2:1", "cpu/net-3:1");
    }

    @Test
    void everyMeasureOfTheIssueHasARow() {
        List<String> ids = Suite.catalog().stream().flatMap(e -> e.specs().stream()).map(Row.Spec::id).toList();
        for (String p : List.of("P1", "P2", "P3", "P4/10ms", "P4/100ms", "P4/250ms", "P5/budget", "P5/fairness",
                "P5/isolation", "P6", "P7/egress", "P7/latency", "P8", "P9")) {
            assertThat(ids).contains(p);
        }
        assertThat(ids).doesNotHaveDuplicates();
    }

    @Test
    void p4P5AndP8HaveBenchmarks() {
        List<String> measured = Suite.catalog().stream().filter(e -> e.factory() != null)
                .flatMap(e -> e.specs().stream()).map(Row.Spec::id).toList();
        assertThat(measured).contains("P4/10ms", "P4/100ms", "P4/250ms", "P5/budget", "P5/fairness", "P5/isolation",
                "P8");
    }

    @Test
    void p3HasABenchmark() {
        List<String> measured = Suite.catalog().stream().filter(e -> e.factory() != null)
                .flatMap(e -> e.specs().stream()).map(Row.Spec::id).toList();
        assertThat(measured).contains("P3");
    }

    @Test
    void aFailingBenchIsAFailedRowAndTheSuiteGoesOn() {
        Row.Spec spec = new Row.Spec("X", "x", "a", "b", "", Goal.atLeast(1));
        Suite.Factory factory = (sizes, log) -> new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return List.of(spec);
            }

            @Override
            public List<Row.Sample> round(int round) {
                if (round == 1) {
                    throw new IllegalStateException("broker gone");
                }
                return List.of(Row.Sample.of(round + 2, 1));
            }

            @Override
            public void close() {
            }
        };
        List<Row> rows = Suite.measure(factory, List.of(spec), new Suite.Sizes(true), 3, 1, quiet(), "");
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0).status()).isEqualTo(Row.Status.FAILED);
        assertThat(rows.get(0).numerators()).as("warm-up not counted, round 0 kept").containsExactly(2.0);
        assertThat(rows.get(0).notes()).anyMatch(n -> n.contains("broker gone"));
    }

    /** The smoke test: in-memory P2 through the suite with --quick; a finite ratio and the JSON file. */
    @Test
    void quickRunOfP2(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("out/bench-results.json");
        Suite.Options o = Suite.Options.parse("--quick", "--only", "P2", "--rounds", "1", "--warmup", "0", "--json",
                json.toString());
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        Report report = Suite.run(o, new PrintStream(progress, true, StandardCharsets.UTF_8));
        report.writeJson(o.json());
        assertThat(report.rows()).extracting(Row::id).containsExactly("P2");
        Row p2 = report.rows().get(0);
        assertThat(p2.status()).isEqualTo(Row.Status.MEASURED);
        assertThat(p2.ratios()).hasSize(1);
        assertThat(p2.ratio().median()).isFinite().isPositive();
        assertThat(p2.met()).isNotNull();
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("P1, P2: round 1/1");
        assertThat(report.table()).contains("| P2 |");
        JsonNode root = new ObjectMapper().readTree(Files.readString(json));
        assertThat(root.get("rows").get(0).get("id").asText()).isEqualTo("P2");
        assertThat(root.get("rows").get(0).get("ratio").get("median").isNumber()).isTrue();
    }

    private static PrintStream quiet() {
        return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    }
}
