package io.verbatim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class RowTest {
    private static final Row.Spec P1 = new Row.Spec("P1", "verbatim ÷ raw \"copy\"", "verbatim", "raw copy",
            "entries/s", Goal.atLeast(0.90));
    private static final Row.Spec P7 = new Row.Spec("P7/egress", "egress", "delegated", "direct", "B/entry",
            Goal.atMost(0.20));
    private static final Machine MACHINE = new Machine(2, "17.0.15", "OpenJDK", 1L << 30, "Linux", "6.1", "amd64", 1.5);

    @Test
    void spreadIsMinMedianMaxOfThePerRoundRatios() {
        // ratios 0.5, 0.25, 1.0, 0.8, 0.6 -> sorted 0.25, 0.5, 0.6, 0.8, 1.0
        Row r = Row.measured(P1, List.of(Row.Sample.of(50, 100), Row.Sample.of(25, 100), Row.Sample.of(100, 100),
                Row.Sample.of(80, 100), Row.Sample.of(60, 100)));
        assertThat(r.ratios()).containsExactly(0.5, 0.25, 1.0, 0.8, 0.6);
        assertThat(r.ratio()).isEqualTo(new Row.Spread(0.25, 0.6, 1.0));
        assertThat(r.numerator().median()).isEqualTo(60);
        assertThat(Row.Spread.of(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(new Row.Spread(1, 2.5, 4));
        assertThat(Row.Spread.of(List.of()).median()).isNaN();
    }

    @Test
    void metIsTheMedianWithinTheGoalInclusive() {
        assertThat(Row.measured(P1, List.of(Row.Sample.of(9, 10))).met()).isTrue(); // 0.90 exactly
        assertThat(Row.measured(P1, List.of(Row.Sample.of(8, 10), Row.Sample.of(9.5, 10), Row.Sample.of(8.9, 10)))
                .verdict()).isEqualTo("MISSED"); // median 0.89, though one round made it
        assertThat(Row.measured(P7, List.of(Row.Sample.of(1, 10))).verdict()).isEqualTo("met");
        assertThat(Row.measured(P1, List.of(Row.Sample.of(1, 0), Row.Sample.of(0, 0), Row.Sample.of(0, 0))).met())
                .as("NaN median").isFalse();
        assertThat(Goal.between(0.95, 1.05).contains(1.05)).isTrue();
        assertThat(Goal.between(0.95, 1.05).contains(1.06)).isFalse();
        assertThat(Goal.atMost(3).text()).isEqualTo("≤ 3");
        assertThat(Goal.between(0.95, 1.05).text()).isEqualTo("0.95–1.05");
    }

    @Test
    void rowsWithoutFiguresSaySoAndHaveNone() {
        Row p3 = Row.without(new Row.Spec("P3", "slow path", "slow", "bare", "entries/s", Goal.atLeast(0.7)),
                Row.Status.NOT_MEASURED, "no benchmark yet");
        assertThat(p3.met()).isNull();
        assertThat(p3.verdict()).isEqualTo("not measured");
        assertThat(Report.line(p3)).isEqualTo("| P3 | slow path | slow | bare | — | — | ≥ 0.70 | not measured |");
        Row none = Row.measured(new Row.Spec("X", "context", "a", "b", "", Goal.none()), List.of(Row.Sample.of(1, 2)));
        assertThat(none.verdict()).isEqualTo("no goal");
        Row failed = Row.measured(P1, List.of(Row.Sample.of(1, 2))).failed("IllegalStateException: boom");
        assertThat(failed.verdict()).isEqualTo("failed");
        assertThat(failed.numerators()).containsExactly(1.0);
        assertThat(failed.notes()).containsExactly("IllegalStateException: boom");
    }

    @Test
    void tableShowsAMetAndAMissedRow() {
        Row missed = Row.measured(P1, List.of(Row.Sample.of(4000, 10000), Row.Sample.of(5000, 10000),
                Row.Sample.of(6000, 10000)));
        Row met = Row.measured(P7, List.of(new Row.Sample(150, 1000, "the leader changed"), Row.Sample.of(100, 1000),
                Row.Sample.of(120, 1000)));
        assertThat(Report.line(missed)).isEqualTo("| P1 | verbatim ÷ raw \"copy\" | verbatim: 5,000 entries/s"
                + " | raw copy: 10,000 entries/s | 0.500 | 0.400 / 0.500 / 0.600 | ≥ 0.90 | MISSED |");
        assertThat(Report.line(met)).isEqualTo("| P7/egress | egress | delegated: 120 B/entry | direct: 1,000 B/entry"
                + " | 0.120 | 0.100 / 0.120 / 0.150 | ≤ 0.20 | met |");
        String table = new Report(MACHINE, 3, 1, false, "2026-12-02T03:40:00Z", 12.0, List.of(missed, met)).table();
        assertThat(table.lines()).contains(
                "machine: 2 cores, Java 17.0.15 (OpenJDK), max heap 1024 MiB, Linux 6.1 (amd64), load average 1.50 at start",
                "| # | measure | numerator (median) | denominator (median) | ratio | per-round ratio min / median / max"
                        + " | goal | met |",
                Report.line(missed), Report.line(met), "  P7/egress: round 1: the leader changed");
    }

    @Test
    void jsonCarriesTheSameFiguresAndNullForNonFinite() throws Exception {
        Row missed = Row.measured(P1, List.of(Row.Sample.of(4000, 10000), Row.Sample.of(5000, 0)));
        Row p6 = Row.without(new Row.Spec("P6", "convergence ÷ round trip", "convergence", "round trip", "ms",
                Goal.atMost(3)), Row.Status.NOT_WIRED, "prints only");
        String json = new Report(MACHINE, 2, 0, true, "2026-12-02T03:40:00Z", 1.5, List.of(missed, p6)).json();
        JsonNode root = new ObjectMapper().readTree(json);
        assertThat(root.get("machine").get("cores").asInt()).isEqualTo(2);
        assertThat(root.get("machine").get("maxHeapBytes").asLong()).isEqualTo(1L << 30);
        assertThat(root.get("quick").asBoolean()).isTrue();
        JsonNode r0 = root.get("rows").get(0);
        assertThat(r0.get("id").asText()).isEqualTo("P1");
        assertThat(r0.get("measure").asText()).isEqualTo("verbatim ÷ raw \"copy\"");
        assertThat(r0.get("numerator").get("rounds").get(1).asDouble()).isEqualTo(5000);
        assertThat(r0.get("denominator").get("unit").asText()).isEqualTo("entries/s");
        assertThat(r0.get("ratio").get("rounds").get(0).asDouble()).isEqualTo(0.4);
        assertThat(r0.get("ratio").get("rounds").get(1).isNull()).as("5000 ÷ 0").isTrue();
        assertThat(r0.get("ratio").get("median").isNull()).isTrue(); // mean of 0.4 and infinity
        assertThat(r0.get("goal").get("min").asDouble()).isEqualTo(0.9);
        assertThat(r0.get("goal").get("max").isNull()).isTrue();
        assertThat(r0.get("met").asBoolean()).isFalse();
        assertThat(r0.get("verdict").asText()).isEqualTo("MISSED");
        JsonNode r1 = root.get("rows").get(1);
        assertThat(r1.get("status").asText()).isEqualTo("not wired yet");
        assertThat(r1.get("met").isNull()).isTrue();
        assertThat(r1.get("ratio").get("rounds").size()).isZero();
        assertThat(r1.get("notes").get(0).asText()).isEqualTo("prints only");
    }
}
