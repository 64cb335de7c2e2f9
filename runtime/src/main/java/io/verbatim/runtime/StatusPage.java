package io.verbatim.runtime;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The node's status as a small HTML page: per peer the exchange's verdict (answered, unsupported) and
 * the last failure; the replicators, each failing one with its last error; per topic its layout, cap
 * mismatches, cold marks and latest changes, and per remote the converged and diverged ranges, the
 * convergence lag, the age of the last state received, the replication backlog per segment and the
 * replication rates (verbatim vs re-batched). Built from the status JSON's map; no script, so it reads
 * the same in a browser, in curl and in a test's parser.
 */
final class StatusPage {
    private StatusPage() {
    }

    @SuppressWarnings("unchecked")
    static String render(Map<String, Object> status, Map<String, RateWindow.Rate> rates) {
        StringBuilder h = new StringBuilder(4096);
        String cluster = String.valueOf(status.get("cluster"));
        h.append("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Verbatim · ").append(esc(cluster))
                .append("</title>\n<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;"
                        + "margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
                        + ".diverged{color:#b00}.converged{color:#070}</style></head><body>\n")
                .append("<h1>cluster <span id=\"cluster\">").append(esc(cluster)).append("</span></h1>\n");
        if (Boolean.TRUE.equals(status.get("deferringOwnChanges"))) {
            h.append("<p id=\"deferring\">own layout changes wait for every peer's state (after a failover)</p>\n");
        }
        h.append("<h2>replication rates (entries/s over the last ").append(RateWindow.SECONDS).append(" s)</h2>\n")
                .append("<table id=\"rates\"><tr><th>remote</th><th>verbatim</th><th>re-batched</th></tr>\n");
        rates.forEach((remote, r) -> h.append("<tr data-remote=\"").append(esc(remote)).append("\"><td>")
                .append(esc(remote)).append("</td><td class=\"verbatim\">").append(fmt(r.verbatim()))
                .append("</td><td class=\"rebatched\">").append(fmt(r.rebatched())).append("</td></tr>\n"));
        h.append("</table>\n");
        peers(h, (Map<String, Object>) status.getOrDefault("peers", Map.of()));
        replicators(h, (Map<String, Object>) status.getOrDefault("replicators", Map.of()));
        Map<String, Object> topics = (Map<String, Object>) status.getOrDefault("topics", Map.of());
        topics.forEach((topic, value) -> {
            Map<String, Object> t = (Map<String, Object>) value;
            h.append("<h2 class=\"topic\">").append(esc(topic)).append("</h2>\n<p>epoch ").append(t.get("epoch"))
                    .append(" · layout ").append(esc(String.valueOf(t.get("layout"))))
                    .append(" · convergence lag ").append(t.get("convergenceLagMillis")).append(" ms")
                    .append(" · effective caps ").append(esc(String.valueOf(t.get("effectiveCaps")))).append("</p>\n");
            Object mismatches = t.get("capMismatches");
            if (mismatches instanceof List<?> list && !list.isEmpty()) {
                h.append("<p class=\"diverged cap-mismatches\">cap mismatches: ").append(ranges(list)).append("</p>\n");
            }
            if (t.get("coldMarks") != null) {
                h.append("<p class=\"cold-marks\">cold marks: ").append(esc(String.valueOf(t.get("coldMarks"))))
                        .append("</p>\n");
            }
            h.append("<table class=\"remotes\" data-topic=\"").append(esc(topic)).append("\"><tr><th>remote</th>"
                    + "<th>converged ranges</th><th>diverged ranges</th><th>last state age</th><th>backlog</th></tr>\n");
            Map<String, Object> remotes = (Map<String, Object>) t.getOrDefault("remotes", Map.of());
            remotes.forEach((remote, rv) -> {
                Map<String, Object> r = (Map<String, Object>) rv;
                Map<String, Object> backlog = (Map<String, Object>) r.getOrDefault("replicationBacklog", Map.of());
                long total = backlog.values().stream().mapToLong(v -> ((Number) v).longValue()).sum();
                h.append("<tr data-remote=\"").append(esc(remote)).append("\"><td>").append(esc(remote)).append("</td>")
                        .append("<td class=\"converged\">").append(ranges(r.get("convergedRanges"))).append("</td>")
                        .append("<td class=\"diverged\">").append(ranges(r.get("divergedRanges"))).append("</td>")
                        .append("<td>").append(r.containsKey("lastStateAgeMillis") ? r.get("lastStateAgeMillis") + " ms"
                                : esc(String.valueOf(r.get("state")))).append("</td>")
                        .append("<td class=\"backlog\" title=\"").append(esc(backlog.toString())).append("\">")
                        .append(total).append("</td></tr>\n");
            });
            h.append("</table>\n");
            Object changes = t.get("recentChanges");
            if (changes instanceof List<?> list && !list.isEmpty()) {
                h.append("<details><summary>latest layout changes</summary><ol class=\"changes\">");
                list.forEach(c -> h.append("<li>").append(esc(String.valueOf(c))).append("</li>"));
                h.append("</ol></details>\n");
            }
        });
        h.append("<p>JSON: <a href=\"/admin/v2/scalable/status\">/admin/v2/scalable/status</a> · "
                + "Prometheus: <a href=\"/metrics\">/metrics</a></p>\n</body></html>\n");
        return h.toString();
    }

    @SuppressWarnings("unchecked")
    private static void peers(StringBuilder h, Map<String, Object> peers) {
        h.append("<h2>peers</h2>\n<table id=\"peers\"><tr><th>peer</th><th>exchange</th><th>last heard</th>"
                + "<th>last failure</th></tr>\n");
        peers.forEach((peer, value) -> {
            Map<String, Object> p = (Map<String, Object>) value;
            String verdict = String.valueOf(p.get("exchange"));
            long heard = ((Number) p.getOrDefault("lastHeardMillisAgo", -1)).longValue();
            h.append("<tr data-peer=\"").append(esc(peer)).append("\"><td>").append(esc(peer)).append("</td><td class=\"")
                    .append(verdict.equals("answered") ? "converged" : "diverged").append(" exchange\">")
                    .append(esc(verdict)).append("</td><td>").append(heard < 0 ? "never" : heard + " ms ago")
                    .append("</td><td class=\"failure\">").append(esc(String.valueOf(p.getOrDefault("lastFailure", ""))))
                    .append("</td></tr>\n");
        });
        h.append("</table>\n");
    }

    @SuppressWarnings("unchecked")
    private static void replicators(StringBuilder h, Map<String, Object> r) {
        List<Map<String, Object>> failing = (List<Map<String, Object>>) r.getOrDefault("failing", List.of());
        h.append("<h2>replicators</h2>\n<p id=\"replicators\">").append(r.getOrDefault("total", 0))
                .append(" replicators · ").append(r.getOrDefault("restarts", 0)).append(" restart(s) · <span class=\"")
                .append(failing.isEmpty() ? "converged" : "diverged").append("\">").append(failing.size())
                .append(" failing</span></p>\n");
        if (failing.isEmpty()) {
            return;
        }
        h.append("<table id=\"failing\"><tr><th>replicator</th><th>state</th><th>failures in a row</th>"
                + "<th>last error</th></tr>\n");
        for (Map<String, Object> f : failing) {
            h.append("<tr><td>").append(esc(String.valueOf(f.get("id")))).append("</td><td>")
                    .append(esc(String.valueOf(f.get("state")))).append("</td><td>").append(f.get("consecutiveFailures"))
                    .append("</td><td class=\"diverged\">").append(esc(String.valueOf(f.get("lastError"))))
                    .append("</td></tr>\n");
        }
        h.append("</table>\n");
    }

    private static String ranges(Object value) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (Object o : list) {
            b.append(b.length() == 0 ? "" : " ").append(esc(String.valueOf(o)));
        }
        return b.toString();
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
