package io.verbatim.runtime;

import io.verbatim.exchange.ClusterStatus;
import io.verbatim.exchange.MarksBySource;
import io.verbatim.exchange.PeerStatus;
import io.verbatim.exchange.RemoteStatus;
import io.verbatim.pipeline.ReplicatorStatus;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The node's status as a small HTML page: per peer the exchange's verdict (answered, unsupported) and
 * the last failure; the replicators, each failing one with its last error; per topic its layout, cap
 * mismatches, cold marks and latest changes, and per remote the converged and diverged ranges, the
 * convergence lag, the age of the last state received, the replication backlog per segment and the
 * replication rates (verbatim vs re-batched). Built from the node's {@link NodeStatus}; no script, so it reads
 * the same in a browser, in curl and in a test's parser.
 */
final class StatusPage {
    private StatusPage() {
    }

    static String render(NodeStatus status, Map<String, RateWindow.Rate> rates) {
        ClusterStatus cluster = status.exchange();
        StringBuilder h = new StringBuilder(4096);
        h.append("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Verbatim · ").append(esc(cluster.cluster()))
                .append("</title>\n<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;"
                        + "margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
                        + ".diverged{color:#b00}.converged{color:#070}</style></head><body>\n")
                .append("<h1>cluster <span id=\"cluster\">").append(esc(cluster.cluster())).append("</span></h1>\n");
        if (cluster.deferringOwnChanges()) {
            h.append("<p id=\"deferring\">own layout changes wait for every peer's state (after a failover)</p>\n");
        }
        h.append("<h2>replication rates (entries/s over the last ").append(RateWindow.SECONDS).append(" s)</h2>\n")
                .append("<table id=\"rates\"><tr><th>remote</th><th>verbatim</th><th>re-batched</th></tr>\n");
        rates.forEach((remote, r) -> h.append("<tr data-remote=\"").append(esc(remote)).append("\"><td>")
                .append(esc(remote)).append("</td><td class=\"verbatim\">").append(fmt(r.verbatim()))
                .append("</td><td class=\"rebatched\">").append(fmt(r.rebatched())).append("</td></tr>\n"));
        h.append("</table>\n");
        peers(h, cluster.peers());
        replicators(h, status.replicators());
        cluster.topics().forEach((topic, t) -> {
            h.append("<h2 class=\"topic\">").append(esc(topic)).append("</h2>\n<p>epoch ").append(t.epoch())
                    .append(" · layout ").append(esc(String.valueOf(t.layout())))
                    .append(" · convergence lag ").append(t.convergenceLag().toMillis()).append(" ms")
                    .append(" · effective caps ").append(esc(String.valueOf(t.effectiveCaps()))).append("</p>\n");
            if (!t.capMismatches().isEmpty()) {
                h.append("<p class=\"diverged cap-mismatches\">cap mismatches: ").append(ranges(t.capMismatches()))
                        .append("</p>\n");
            }
            h.append("<p class=\"cold-marks\">cold marks: ").append(esc(describe(t.coldMarks()))).append("</p>\n");
            h.append("<table class=\"remotes\" data-topic=\"").append(esc(topic)).append("\"><tr><th>remote</th>"
                    + "<th>converged ranges</th><th>diverged ranges</th><th>last state age</th><th>backlog</th></tr>\n");
            t.remotes().forEach((remote, r) -> {
                long total = r.replicationBacklog().values().stream().mapToLong(Long::longValue).sum();
                Optional<RemoteStatus.Held> held = r.held();
                h.append("<tr data-remote=\"").append(esc(remote)).append("\"><td>").append(esc(remote)).append("</td>")
                        .append("<td class=\"converged\">").append(ranges(held.map(RemoteStatus.Held::convergedRanges)
                                .orElse(List.of()))).append("</td>")
                        .append("<td class=\"diverged\">").append(ranges(held.map(RemoteStatus.Held::divergedRanges)
                                .orElse(List.of()))).append("</td>")
                        .append("<td>").append(held.map(s -> s.lastStateAge().toMillis() + " ms")
                                .orElse("no state received")).append("</td>")
                        .append("<td class=\"backlog\" title=\"").append(esc(r.replicationBacklog().toString()))
                        .append("\">").append(total).append("</td></tr>\n");
            });
            h.append("</table>\n");
            if (!t.recentChanges().isEmpty()) {
                h.append("<details><summary>latest layout changes</summary><ol class=\"changes\">");
                t.recentChanges().forEach(c -> h.append("<li>").append(esc(String.valueOf(c))).append("</li>"));
                h.append("</ol></details>\n");
            }
        });
        h.append("<p>JSON: <a href=\"/admin/v2/scalable/status\">/admin/v2/scalable/status</a> · "
                + "Prometheus: <a href=\"/metrics\">/metrics</a></p>\n</body></html>\n");
        return h.toString();
    }

    private static void peers(StringBuilder h, Map<String, PeerStatus> peers) {
        h.append("<h2>peers</h2>\n<table id=\"peers\"><tr><th>peer</th><th>exchange</th><th>last heard</th>"
                + "<th>last failure</th></tr>\n");
        peers.forEach((peer, p) -> h.append("<tr data-peer=\"").append(esc(peer)).append("\"><td>").append(esc(peer))
                .append("</td><td class=\"").append(p.exchange() == PeerStatus.Verdict.ANSWERED ? "converged" : "diverged")
                .append(" exchange\">").append(esc(p.exchange().toString())).append("</td><td>")
                .append(p.lastHeard().map(d -> d.toMillis() + " ms ago").orElse("never"))
                .append("</td><td class=\"failure\">").append(esc(p.lastFailure().orElse(""))).append("</td></tr>\n"));
        h.append("</table>\n");
    }

    private static void replicators(StringBuilder h, NodeStatus.Replicators r) {
        List<ReplicatorStatus> failing = r.failing();
        h.append("<h2>replicators</h2>\n<p id=\"replicators\">").append(r.total())
                .append(" replicators · ").append(r.restarts()).append(" restart(s) · <span class=\"")
                .append(failing.isEmpty() ? "converged" : "diverged").append("\">").append(failing.size())
                .append(" failing</span></p>\n");
        if (failing.isEmpty()) {
            return;
        }
        h.append("<table id=\"failing\"><tr><th>replicator</th><th>state</th><th>failures in a row</th>"
                + "<th>last error</th></tr>\n");
        for (ReplicatorStatus f : failing) {
            h.append("<tr><td>").append(esc(f.id())).append("</td><td>")
                    .append(esc(f.state().name())).append("</td><td>").append(f.consecutiveFailures())
                    .append("</td><td class=\"diverged\">").append(esc(String.valueOf(f.lastError())))
                    .append("</td></tr>\n");
        }
        h.append("</table>\n");
    }

    /** The marks by source as the page always showed them. */
    private static String describe(MarksBySource m) {
        return "{manual=" + m.manual() + ", policy=" + m.policy() + ", caps=" + m.caps() + ", bucketLowerings="
                + m.bucketLowerings() + "}";
    }

    private static String ranges(List<?> list) {
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
