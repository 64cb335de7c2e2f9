package io.verbatim.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the exchange's benches read off the JVM (CPU of every Java thread, heap after GC) and sum up
 * (median, min, max of a run's rounds); the pauses between their steps.
 */
final class ExchangeMeasures {
    private ExchangeMeasures() {
    }

    /** Milliseconds of CPU the Java threads spent since {@code before} (a {@link #threadCpu} snapshot). */
    static double cpuSince(Map<Long, Long> before) {
        double[] sum = new double[1];
        threadCpu().forEach((id, nanos) -> sum[0] += (nanos - before.getOrDefault(id, 0L)) / 1e6);
        return sum[0];
    }

    /** CPU time of every live Java thread, by id. */
    static Map<Long, Long> threadCpu() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> out = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long nanos = threads.getThreadCpuTime(id);
            if (nanos >= 0) {
                out.put(id, nanos);
            }
        }
        return out;
    }

    static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static void pause() {
        pause(1000);
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static double min(double[] values) {
        return Arrays.stream(values).min().orElse(Double.NaN);
    }

    static double max(double[] values) {
        return Arrays.stream(values).max().orElse(Double.NaN);
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** What a benchmark step expects to be there. */
    static <T> T need(@Nullable T value) {
        return Objects.requireNonNull(value);
    }
}
