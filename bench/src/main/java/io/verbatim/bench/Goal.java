package io.verbatim.bench;

import java.util.Locale;

/**
 * A measure's goal as written in the issue: a closed range the median ratio must fall in ({@code min} or
 * {@code max} infinite for a one-sided goal), no goal at all (a figure printed for context), or a goal in
 * words only (met or not is then judged by reading, never by the suite).
 */
record Goal(String text, double min, double max) {
    private static final String NONE = "—";

    /** {@code ratio ≥ min}. */
    public static Goal atLeast(double min) {
        return new Goal("≥ " + number(min), min, Double.POSITIVE_INFINITY);
    }

    /** {@code ratio ≤ max}. */
    public static Goal atMost(double max) {
        return new Goal("≤ " + number(max), Double.NEGATIVE_INFINITY, max);
    }

    /** {@code min ≤ ratio ≤ max}. */
    public static Goal between(double min, double max) {
        return new Goal(number(min) + "–" + number(max), min, max);
    }

    /** No goal: the row is context for the others. */
    public static Goal none() {
        return new Goal(NONE, Double.NaN, Double.NaN);
    }

    /** A goal in words (P8 "completes, heap bounded"): not checked by the suite. */
    public static Goal words(String text) {
        return new Goal(text, Double.NaN, Double.NaN);
    }

    /** Whether a ratio can be checked against this goal. */
    public boolean numeric() {
        return !Double.isNaN(min) && !Double.isNaN(max);
    }

    /** Whether {@code ratio} is within the goal (inclusive); false for a non-finite ratio or a non-numeric goal. */
    public boolean contains(double ratio) {
        return numeric() && Double.isFinite(ratio) && ratio >= min && ratio <= max;
    }

    /** Whether this is {@link #none()}. */
    public boolean isNone() {
        return !numeric() && text.equals(NONE);
    }

    private static String number(double v) {
        return v >= 10 || v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }
}
