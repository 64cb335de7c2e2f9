package io.verbatim.bench;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/** Where the figures were measured: a ratio from two cores shared with other work is not one from a quiet server. */
record Machine(int cores, String java, String vm, long maxHeapBytes, String os, String osVersion, String arch,
        double loadAverage) {
    /** This JVM, now. */
    public static Machine current() {
        return new Machine(Runtime.getRuntime().availableProcessors(), System.getProperty("java.version", "?"),
                System.getProperty("java.vm.name", "?"), Runtime.getRuntime().maxMemory(),
                System.getProperty("os.name", "?"), System.getProperty("os.version", "?"),
                System.getProperty("os.arch", "?"), ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%d cores, Java %s (%s), max heap %d MiB, %s %s (%s), load average %s at start",
                cores, java, vm, maxHeapBytes >> 20, os, osVersion, arch,
                loadAverage < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", loadAverage));
    }
}
