package io.verbatim.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.List;

/**
 * CPU time of this JVM's threads, by the prefix of their names (the schedulers name their threads):
 * to say, beside a throughput, which threads the CPU went to. A thread that ended in between is missed.
 */
final class ThreadCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private ThreadCpu() {
    }

    /** Nanoseconds of CPU so far of the live threads whose names start with one of {@code prefixes}. */
    static long nanos(List<String> prefixes) {
        long sum = 0;
        long[] ids = THREADS.getAllThreadIds();
        ThreadInfo[] infos = THREADS.getThreadInfo(ids, 0);
        for (int i = 0; i < ids.length; i++) {
            ThreadInfo info = infos[i];
            if (info != null && prefixes.stream().anyMatch(info.getThreadName()::startsWith)) {
                sum += Math.max(0, THREADS.getThreadCpuTime(ids[i]));
            }
        }
        return sum;
    }
}
