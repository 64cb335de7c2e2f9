package io.verbatim.examples;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.ReplicationChecks;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The demo's summary for people, its JSON line for machines, and its HTML report. */
final class DemoOutput {
    private DemoOutput() {
    }

    static void summary(Demo.Result r, PrintWriter out) {
        out.println();
        out.println("== summary: " + r.topics().size() + " topic(s) " + r.topics());
        out.printf("%-10s %12s %14s %14s %10s %10s%n", "origin", "produced", "verbatim out", "re-batched out",
                "parts", "failures");
        r.flows().forEach((origin, f) -> out.printf(Locale.ROOT, "%-10s %,12d %,14d %,14d %,10d %,10d%n", origin,
                f.produced(), f.verbatimEntries(), f.rebatchedEntries(), f.rebatchedParts(), f.sendFailures()));
        out.printf(Locale.ROOT, "verbatim share of replicated entries: %.2f%%%n", 100 * r.verbatimShare());
        out.printf(Locale.ROOT, "catch-up after traffic stopped: %.2f s%n", r.catchUpSeconds());
        int width = r.changes().stream().mapToInt(c -> c.what().length()).max().orElse(0);
        for (Demo.Change c : r.changes()) {
            out.printf(Locale.ROOT, "convergence lag: %-" + width + "s  every cluster converged after %,d ms%n",
                    c.what(), c.convergedAfterMs());
        }
        r.layouts().forEach((topic, perCluster) -> perCluster.forEach((cluster, layout) -> out.printf(
                "layout of %-10s on %-10s %s%n", Demo.shortName(topic), cluster, layout)));
        if (!r.ticks().isEmpty()) {
            out.printf(Locale.ROOT, "heap after GC: %,d MB at the first tick, %,d MB at the end%n",
                    r.ticks().get(0).heapBytes() >> 20, r.ticks().get(r.ticks().size() - 1).heapBytes() >> 20);
        }
        out.println();
        out.println("== checks");
        for (ReplicationChecks.Check c : r.checks()) {
            out.printf("%s %s — %s%n", c.passed() ? "PASS" : "FAIL", c.name(), c.detail());
        }
        out.println(r.passed() ? "all checks passed" : "SOME CHECKS FAILED");
    }

    static Map<String, Object> json(Demo.Result r) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("checks_passed", r.passed());
        j.put("topics", r.topics());
        j.put("duration_s", r.options().duration().toSeconds());
        j.put("rate_per_cluster", r.options().rate());
        j.put("rtt_ms", r.options().config().rtt().toMillis());
        j.put("outage_ms", r.options().outage().toMillis());
        Map<String, Object> produced = new LinkedHashMap<>();
        Map<String, Object> replicated = new LinkedHashMap<>();
        r.flows().forEach((origin, f) -> {
            produced.put(origin, f.produced());
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("verbatim_entries", f.verbatimEntries());
            out.put("rebatched_entries", f.rebatchedEntries());
            out.put("rebatched_parts", f.rebatchedParts());
            out.put("send_failures", f.sendFailures());
            replicated.put(origin, out);
        });
        j.put("produced", produced);
        j.put("replicated", replicated);
        j.put("verbatim_share", r.verbatimShare());
        j.put("catch_up_s", r.catchUpSeconds());
        List<Object> changes = new ArrayList<>();
        for (Demo.Change c : r.changes()) {
            changes.add(Map.of("at_s", c.atSeconds(), "change", c.what(), "converged_after_ms", c.convergedAfterMs()));
        }
        j.put("layout_changes", changes);
        j.put("convergence_lag_ms_max", r.changes().stream().mapToLong(Demo.Change::convergedAfterMs).max().orElse(0));
        j.put("layouts", r.layouts());
        List<Object> heap = new ArrayList<>();
        r.ticks().forEach(t -> heap.add(t.heapBytes()));
        j.put("heap_after_gc_bytes", heap);
        List<Object> checks = new ArrayList<>();
        for (ReplicationChecks.Check c : r.checks()) {
            checks.add(Map.of("name", c.name(), "passed", c.passed(), "detail", c.detail()));
        }
        j.put("checks", checks);
        return j;
    }

    static String jsonLine(Demo.Result r) {
        try {
            return new ObjectMapper().writeValueAsString(json(r));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A self-contained page: the verbatim and re-batched rates over time with the layout changes marked. */
    static String html(Demo.Result r) {
        double maxT = Math.max(1, r.ticks().stream().mapToDouble(Demo.Tick::atSeconds).max().orElse(1));
        StringBuilder svg = new StringBuilder();
        int w = 900;
        int panel = 160;
        int left = 70;
        svg.append(String.format(Locale.ROOT, "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                + "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">%n", w + left + 20, 2 * panel + 90));
        // Two panels on one time axis, each on its own scale: re-batching is a trickle beside the fast path.
        svg.append(panel(r, "verbatim", "verbatim entries/s", "#1f77b4", true, 20, panel, w, left, maxT));
        svg.append(panel(r, "rebatched", "re-batched entries/s", "#d62728", false, 40 + panel, panel, w, left, maxT));
        int axis = 40 + 2 * panel;
        for (int i = 0; i <= 10; i++) {
            double t = maxT * i / 10;
            double x = left + w * t / maxT;
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f s</text>%n", x,
                    axis + 16, t));
        }
        for (Demo.Change c : r.changes()) {
            double x = left + w * c.atSeconds() / maxT;
            svg.append(String.format(Locale.ROOT, "<line class=\"change\" x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"%d\" "
                    + "stroke=\"#999\" stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"12\">%s</text>%n", x, x, axis,
                    x + 3, esc(c.what())));
        }
        svg.append("</svg>\n");

        StringBuilder page = new StringBuilder();
        page.append("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Verbatim demo report</title>\n")
                .append("<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
                        + "td,th{border:1px solid #ccc;padding:4px 8px}.pass{color:#070}.fail{color:#b00}</style>"
                        + "</head><body>\n")
                .append("<h1>Verbatim demo: ").append(esc(String.join(", ", r.topics()))).append("</h1>\n")
                .append(String.format(Locale.ROOT, "<p>%d clusters, %d msg/s per cluster for %d s%s. Verbatim share "
                                + "of replicated entries: <b id=\"share\">%.2f%%</b>. Checks: <b class=\"%s\">%s</b>.</p>%n",
                        r.flows().size(), r.options().rate(), r.options().duration().toSeconds(),
                        r.options().config().rtt().isZero() ? ""
                                : ", simulated round trip " + r.options().config().rtt().toMillis() + " ms",
                        100 * r.verbatimShare(), r.passed() ? "pass" : "fail", r.passed() ? "all passed" : "FAILED"))
                .append("<h2>Replicated entries per second, all clusters and remotes</h2>\n")
                .append("<p>Each panel has its own scale; dashed lines mark the layout changes.</p>\n")
                .append(svg)
                .append("<h2>Per origin</h2>\n<table><tr><th>origin</th><th>produced</th><th>verbatim out</th>"
                        + "<th>re-batched out</th><th>parts</th><th>send failures</th></tr>\n");
        r.flows().forEach((origin, f) -> page.append(String.format(Locale.ROOT,
                "<tr><td>%s</td><td>%,d</td><td>%,d</td><td>%,d</td><td>%,d</td><td>%,d</td></tr>%n", esc(origin),
                f.produced(), f.verbatimEntries(), f.rebatchedEntries(), f.rebatchedParts(), f.sendFailures())));
        page.append("</table>\n<h2>Layout changes</h2>\n<table><tr><th>at</th><th>change</th>"
                + "<th>every cluster converged after</th></tr>\n");
        for (Demo.Change c : r.changes()) {
            page.append(String.format(Locale.ROOT, "<tr><td>%.1f s</td><td>%s</td><td>%,d ms</td></tr>%n",
                    c.atSeconds(), esc(c.what()), c.convergedAfterMs()));
        }
        page.append("</table>\n<h2>Final layouts</h2>\n<ul>\n");
        r.layouts().forEach((topic, perCluster) -> perCluster.forEach((cluster, layout) -> page.append("<li>")
                .append(esc(Demo.shortName(topic))).append(" on ").append(esc(cluster)).append(": ")
                .append(esc(layout)).append("</li>\n")));
        page.append("</ul>\n<h2>Checks</h2>\n<table id=\"checks\">\n");
        for (ReplicationChecks.Check c : r.checks()) {
            page.append("<tr><td class=\"").append(c.passed() ? "pass\">PASS" : "fail\">FAIL").append("</td><td>")
                    .append(esc(c.name())).append("</td><td>").append(esc(c.detail())).append("</td></tr>\n");
        }
        page.append("</table>\n</body></html>\n");
        return page.toString();
    }

    private static String panel(Demo.Result r, String id, String title, String colour, boolean verbatim, int top,
            int height, int w, int left, double maxT) {
        double max = Math.max(1, r.ticks().stream()
                .mapToDouble(t -> verbatim ? t.verbatimPerSecond() : t.rebatchedPerSecond()).max().orElse(1));
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\" fill=\"%s\">%s</text>%n",
                left + 4, top + 12, colour, title));
        b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>"
                + "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>%n", left, top, left, top + height,
                left, top + height, left + w, top + height));
        for (int i = 0; i <= 2; i++) {
            double y = top + height - height * i / 2.0;
            b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%,.0f</text>%n", left - 4,
                    y + 4, max * i / 2));
        }
        StringBuilder points = new StringBuilder();
        for (Demo.Tick t : r.ticks()) {
            double v = verbatim ? t.verbatimPerSecond() : t.rebatchedPerSecond();
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", left + w * t.atSeconds() / maxT,
                    top + height - height * v / max));
        }
        b.append("<polyline id=\"").append(id).append("\" fill=\"none\" stroke=\"").append(colour)
                .append("\" stroke-width=\"2\" points=\"").append(points.toString().trim()).append("\"/>\n");
        return b.toString();
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
