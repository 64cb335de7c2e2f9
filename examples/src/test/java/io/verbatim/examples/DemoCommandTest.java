package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.cli.Verbatim;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code verbatim demo}, as a user runs it: the examples' jar, its arguments those after {@code demo}. */
class DemoCommandTest {
    @TempDir
    Path dir;

    /** Exit code, standard output, standard error. */
    record Run(int code, String out, String err) {
        String lastLine() {
            String[] lines = out.strip().split("\n");
            return lines[lines.length - 1];
        }
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = DemoCommand.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString());
    }

    /** Picocli formats descriptions with {@code String.format}: a bare {@code %} is warned about on System.err. */
    @Test
    void itsHelpIsTheCommandLinesAndPrintsWithoutPicocliWarnings() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream warnings = new ByteArrayOutputStream();
        System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
        try {
            Run r = run("--help");
            assertThat(r.code()).isZero();
            assertThat(r.out()).startsWith("Usage: verbatim demo").contains(Verbatim.DEMO_DESCRIPTION.substring(0, 40))
                    .contains("at 75% of the run");
        } finally {
            System.setErr(stderr);
        }
        assertThat(warnings.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void theDemoRunsItsChecksAndEndsWithOneJsonLine() throws Exception {
        Path report = dir.resolve("report.html");
        Run r = run("--duration", "4s", "--rate", "600", "--keys", "200", "--outage", "500ms", "--json",
                "--report", report.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(r.lastLine());
        assertThat(json.path("checks_passed").asBoolean()).as(r.err()).isTrue();
        assertThat(json.path("produced").path("us-east").asLong()).isGreaterThan(1_000);
        assertThat(json.path("replicated").path("eu-west").path("verbatim_entries").asLong()).isPositive();
        assertThat(json.path("verbatim_share").asDouble()).isGreaterThan(0.5);
        assertThat(json.path("layout_changes").size()).isEqualTo(4);
        assertThat(json.path("topics").size()).isEqualTo(3);
        assertThat(json.path("checks").toString()).contains("payments: every message on every cluster");
        assertThat(json.path("outage_ms").asLong()).isEqualTo(500);
        assertThat(r.err()).contains("ap-south's brokers go down for 500 ms").contains("ap-south's brokers are back");
        assertThat(json.path("checks").size()).isGreaterThanOrEqualTo(8);
        assertThat(r.err()).contains("[").contains("verbatim/s").contains("== checks");
        String html = Files.readString(report);
        assertThat(html).contains("<svg id=\"chart\"").contains("<polyline id=\"verbatim\"")
                .contains("<polyline id=\"rebatched\"").contains("class=\"change\"").contains("all passed");
    }

    @Test
    void aBadConfigurationStopsTheDemoNamingTheKey() throws Exception {
        Path config = dir.resolve("bad.yaml");
        Files.writeString(config, "clusters: [{name: a, token: a-token}, {name: b, token: b-token}]\nsecurity: {adminToken: t}\nslowPath: {bytesPerSecond: 0}\n");
        Run r = run("--config", config.toString());
        assertThat(r.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(r.err()).contains("slowPath.bytesPerSecond: 0 is out of range");
        assertThat(run("--duration", "soon").err()).contains("--duration: 'soon' is not a duration");
    }

    /** 99999999999999999999d used to become 292 years, and a 1000-day round trip overflowed the timers later. */
    @Test
    void aDurationTooLongIsRefusedBeforeTheDemoStarts() {
        // Without the limits the demo would run (for 292 years), so each is given 30 s to be refused.
        Run huge = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> run("--duration", "99999999999999999999d"));
        assertThat(huge.err()).contains("--duration: '99999999999999999999d' is too long (expected at most 106751d");
        Run rtt = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> run("--rtt", "1000d"));
        assertThat(rtt.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(rtt.err()).contains("network.rtt: 1000d is out of range (expected a duration within [0ms, 1m])");
    }
}
