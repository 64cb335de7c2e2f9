package io.verbatim.layoutstore;

/** A compare-and-set found another epoch than the one it expected: re-read and try again. */
public final class StaleEpochException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StaleEpochException(String topic, long expected, long actual) {
        super("topic " + topic + " is at epoch " + actual + ", not the expected " + expected);
    }
}
