package io.verbatim.examples;

import io.verbatim.examples.FaultChecker.Rule;
import io.verbatim.examples.FaultChecker.Violation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/** The fault suite's table: per phase and direction, the drain after the heal; per phase, messages and violations. */
final class FaultTable {

    /** One direction's time from the heal until its backlog was 0 and both ends held the same layout. */
    record Drain(String from, String to, OptionalLong millis, String last) {
        String shown() {
            return millis.isPresent() ? String.format("%.2f s", millis.getAsLong() / 1000.0) : "not drained";
        }
    }

    /** Split calls during a phase's fault: applied, refused (4xx), failed (no answer, 5xx, node down). */
    record Splits(int applied, int refused, int failed) {
        @Override
        public String toString() {
            return applied + "/" + refused + "/" + failed;
        }
    }

    /**
     * One phase.
     *
     * @param acknowledged acknowledged messages so far (every phase's)
     * @param checked acknowledged messages the checker looked for on every cluster
     * @param unknown messages of unknown calls so far, and how many of them are on every cluster
     * @param tookMillis the phase from its first call to its check's end
     */
    record Phase(int number, String fault, String target, List<Drain> drains, long acknowledged, long checked,
            long unknown, long unknownEverywhere, Splits splits, List<Violation> violations, long tookMillis) {
        Phase {
            drains = List.copyOf(drains);
            violations = List.copyOf(violations);
        }

        /** The new violations by rule, e.g. {@code MISSING 12, DRAIN 1}, or {@code 0}. */
        String violationCounts() {
            if (violations.isEmpty()) {
                return "0";
            }
            Map<Rule, Integer> counts = new TreeMap<>();
            violations.forEach(v -> counts.merge(v.rule(), 1, Integer::sum));
            List<String> out = new ArrayList<>();
            counts.forEach((r, n) -> out.add(r + " " + n));
            return String.join(", ", out);
        }
    }

    private final String title;
    private final List<Phase> phases = new ArrayList<>();

    FaultTable(String title) {
        this.title = title;
    }

    synchronized void add(Phase phase) {
        phases.add(phase);
    }

    synchronized List<Phase> phases() {
        return List.copyOf(phases);
    }

    private static final String ROW = "%3s  %-34s %-27s %-20s %11s %9s %9s %11s %8s %7s  %s%n";

    /** The table as text, a header and a row per (phase, direction). */
    synchronized String format() {
        StringBuilder out = new StringBuilder(title).append(System.lineSeparator());
        out.append(String.format(ROW, "#", "fault", "target", "direction", "drain", "acked", "checked",
                "unknown", "splits", "took", "violations (new)"));
        for (Phase p : phases) {
            boolean first = true;
            for (Drain d : p.drains()) {
                out.append(first ? String.format(ROW, p.number(), p.fault(), p.target(), d.from() + "->" + d.to(),
                        d.shown(), p.acknowledged(), p.checked(), p.unknownEverywhere() + "/" + p.unknown(), p.splits(),
                        p.tookMillis() / 1000 + " s", p.violationCounts()) : String.format(ROW, "", "", "",
                        d.from() + "->" + d.to(), d.shown(), "", "", "", "", "", ""));
                first = false;
            }
        }
        out.append("unknown: messages of calls that failed or timed out found on every cluster / sent; splits: "
                + "applied/refused/failed").append(System.lineSeparator());
        return out.toString();
    }
}
