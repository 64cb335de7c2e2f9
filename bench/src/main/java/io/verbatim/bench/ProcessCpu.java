package io.verbatim.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * CPU time of whole processes: this JVM's (every thread, the JIT's and the collector's included) and another
 * process's by its pid (a Pulsar broker's child process), as the operating system counts them.
 */
final class ProcessCpu {
    private ProcessCpu() {
    }

    /** Nanoseconds of CPU this JVM used so far (user and system). */
    static long self() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        throw new IllegalStateException("this JVM does not say its process's CPU time");
    }

    /** Nanoseconds of CPU process {@code pid} used so far (user and system). */
    static long of(long pid) {
        return ProcessHandle.of(pid).flatMap(p -> p.info().totalCpuDuration()).map(Duration::toNanos)
                .orElseThrow(() -> new IllegalStateException("no CPU time for process " + pid));
    }
}
