package io.verbatim.bench;

import java.util.List;

/**
 * A benchmark the suite runs in rounds. Each round measures, side by side, the numerator and the
 * denominator of every row it declares (alternating their order from round to round), and answers one
 * sample per row, in the order of {@link #specs()}.
 */
interface Bench extends AutoCloseable {
    /** The rows this benchmark measures. */
    List<Row.Spec> specs();

    /** One round; {@code round} counts from 0, warm-up rounds are negative. */
    List<Row.Sample> round(int round) throws Exception;

    /** Releases what the benchmark holds (schedulers, groups, a broker). */
    @Override
    void close();
}
