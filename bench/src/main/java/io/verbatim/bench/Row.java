package io.verbatim.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One line of the suite's table: what is measured ({@link Spec}), how it went ({@link Status}), and the
 * numerator and denominator of every measured round, both measured in the same round. The ratio is
 * numerator ÷ denominator per round; the row's ratio is the median of those, and it is the median that
 * must be within the goal.
 */
record Row(Spec spec, Status status, List<Double> numerators, List<Double> denominators, List<String> notes) {
    /** What a row measures; {@code unit} is the numerator's and the denominator's (a ratio of like to like). */
    public record Spec(String id, String measure, String numerator, String denominator, String unit, Goal goal) {
    }

    /** One round's figures for one row, and anything worth saying about the round ("" if nothing). */
    public record Sample(double numerator, double denominator, String note) {
        public static Sample of(double numerator, double denominator) {
            return new Sample(numerator, denominator, "");
        }
    }

    /** Min, median (the mean of the middle two for an even count) and max; NaN for no values. */
    public record Spread(double min, double median, double max) {
        public static Spread of(List<Double> values) {
            if (values.isEmpty()) {
                return new Spread(Double.NaN, Double.NaN, Double.NaN);
            }
            double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
            Arrays.sort(v);
            int n = v.length;
            double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
            return new Spread(v[0], median, v[n - 1]);
        }
    }

    /** Whether the row has figures, and if not, why. */
    public enum Status {
        MEASURED("measured"),
        /** No benchmark exists for it yet: no number is printed, never a made-up one. */
        NOT_MEASURED("not measured"),
        /** A benchmark exists but the suite does not call it yet. */
        NOT_WIRED("not wired yet"),
        /** Its benchmark threw: the rounds measured before, if any, are kept; the note says what failed. */
        FAILED("failed");

        private final String text;

        Status(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    public Row {
        numerators = List.copyOf(numerators);
        denominators = List.copyOf(denominators);
        notes = List.copyOf(notes);
        if (numerators.size() != denominators.size()) {
            throw new IllegalArgumentException(spec.id() + ": " + numerators.size() + " numerators, "
                    + denominators.size() + " denominators");
        }
    }

    /** A row with the given rounds. */
    public static Row measured(Spec spec, List<Sample> rounds) {
        List<Double> num = new ArrayList<>();
        List<Double> den = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < rounds.size(); i++) {
            Sample s = rounds.get(i);
            num.add(s.numerator());
            den.add(s.denominator());
            if (!s.note().isEmpty()) {
                notes.add("round " + (i + 1) + ": " + s.note());
            }
        }
        return new Row(spec, Status.MEASURED, num, den, notes);
    }

    /** A row without figures ({@link Status#NOT_MEASURED} or {@link Status#NOT_WIRED}), with why. */
    public static Row without(Spec spec, Status status, String note) {
        return new Row(spec, status, List.of(), List.of(), note.isEmpty() ? List.of() : List.of(note));
    }

    /** This row, failed: its rounds so far kept, {@code why} added to the notes. */
    public Row failed(String why) {
        List<String> all = new ArrayList<>(notes);
        all.add(why);
        return new Row(spec, Status.FAILED, numerators, denominators, all);
    }

    public String id() {
        return spec.id();
    }

    /** Numerator ÷ denominator of each round. */
    public List<Double> ratios() {
        List<Double> out = new ArrayList<>(numerators.size());
        for (int i = 0; i < numerators.size(); i++) {
            out.add(numerators.get(i) / denominators.get(i));
        }
        return out;
    }

    public Spread ratio() {
        return Spread.of(ratios());
    }

    public Spread numerator() {
        return Spread.of(numerators);
    }

    public Spread denominator() {
        return Spread.of(denominators);
    }

    /** Met (true), missed (false), or not judged (null: no figures, no numeric goal). */
    public @Nullable Boolean met() {
        if (numerators.isEmpty() || status == Status.NOT_MEASURED || status == Status.NOT_WIRED
                || !spec.goal().numeric()) {
            return null;
        }
        return spec.goal().contains(ratio().median());
    }

    /** What the table's last column says: met, MISSED, no goal, not measured, not wired yet, failed. */
    public String verdict() {
        if (status != Status.MEASURED) {
            return status.text();
        }
        Boolean met = met();
        if (met != null) {
            return met ? "met" : "MISSED";
        }
        return spec.goal().isNone() ? "no goal" : "judge by reading";
    }
}
