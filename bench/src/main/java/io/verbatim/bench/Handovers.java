package io.verbatim.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** One handover case's times without an owner, one per segment the member that went had acted on, in ms. */
final class Handovers {
    private final String member;
    private final String kase;
    private final int held;
    private final int segments;
    private final List<Double> millis = new ArrayList<>();
    private double closeMs = Double.NaN;

    Handovers(String member, String kase, int held, int segments) {
        this.member = member;
        this.kase = kase;
        this.held = held;
        this.segments = segments;
    }

    void add(double ms) {
        millis.add(ms);
    }

    /** The close that stands for a kill returned {@code ms} after the times' start. */
    void closedAfter(double ms) {
        closeMs = ms;
    }

    String kase() {
        return kase;
    }

    /** Nearest rank: the smallest time at least {@code p} % of the segments had an owner again by. */
    double percentile(double p) {
        if (millis.isEmpty()) {
            throw new IllegalStateException(kase + " of " + member + ": no segment was handed over");
        }
        List<Double> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        int rank = (int) Math.ceil(p / 100 * sorted.size());
        return sorted.get(Math.max(0, rank - 1));
    }

    double max() {
        return percentile(100);
    }

    /** What a round's note and the progress say. */
    String note() {
        return String.format(Locale.ROOT, "%s of %s: %d of %d segments, p50 %.0f p99 %.0f max %.0f ms%s", kase, member,
                held, segments, percentile(50), percentile(99), max(),
                Double.isNaN(closeMs) ? "" : String.format(Locale.ROOT, " (its close took %.0f ms)", closeMs));
    }
}
