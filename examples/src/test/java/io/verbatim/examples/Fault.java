package io.verbatim.examples;

import java.util.List;
import java.util.Random;

/** One fault of the suite, on the clusters the seed picked. */
sealed interface Fault {

    /** What the table calls it. */
    String name();

    /** Whom it hits, e.g. {@code us-east<->eu-west} or {@code us-east}. */
    String target();

    /** Nothing: the warm-up before the first fault, and the baseline its drains compare with. */
    record None() implements Fault {
        @Override
        public String name() {
            return "none (warm-up)";
        }

        @Override
        public String target() {
            return "-";
        }
    }

    /** No fault but splits: on {@code clusters} at the same moment at its start, and the phase's own later. */
    record Splits(List<String> clusters) implements Fault {
        public Splits {
            clusters = List.copyOf(clusters);
        }

        @Override
        public String name() {
            return "concurrent splits";
        }

        @Override
        public String target() {
            return String.join("+", clusters);
        }
    }

    /** Both links between {@code a} and {@code b} forward nothing; sockets stay open (a blackhole). */
    record Blackhole(String a, String b) implements Fault {
        @Override
        public String name() {
            return "both-way partition (blackhole)";
        }

        @Override
        public String target() {
            return a + "<->" + b;
        }
    }

    /** Every connection between {@code a} and {@code b} is reset and new ones are refused. */
    record Reset(String a, String b) implements Fault {
        @Override
        public String name() {
            return "both-way partition (reset)";
        }

        @Override
        public String target() {
            return a + "<->" + b;
        }
    }

    /** Bytes from {@code from} to {@code to} are held, on whichever side opened the connection; the rest passes. */
    record OneWay(String from, String to) implements Fault {
        @Override
        public String name() {
            return "one-way partition";
        }

        @Override
        public String target() {
            return from + "->" + to;
        }
    }

    /** Every link delays with seeded jitter and loses (as retransmission stalls and resets). */
    record Latency(FaultProxy.Latency latency) implements Fault {
        @Override
        public String name() {
            return String.format("latency %d+0..%d ms, loss %.1f %%", latency.base().toMillis(),
                    latency.jitter().toMillis(), latency.loss() * 100);
        }

        @Override
        public String target() {
            return String.format("every link, %.2f %% resets", latency.resets() * 100);
        }
    }

    /** Every connection between {@code a} and {@code b} loses its callee side; the caller's stays open, silent. */
    record HalfOpen(String a, String b) implements Fault {
        @Override
        public String name() {
            return "half-open connections";
        }

        @Override
        public String target() {
            return a + "<->" + b;
        }
    }

    /**
     * A split on {@code cluster}, then while its own traffic holds off, a second client sends produce calls there
     * and goes away before each is answered.
     */
    record Abandon(String cluster) implements Fault {
        @Override
        public String name() {
            return "produce calls abandoned";
        }

        @Override
        public String target() {
            return cluster;
        }
    }

    /** SIGSTOP, and SIGCONT at the heal. */
    record Pause(String cluster) implements Fault {
        @Override
        public String name() {
            return "SIGSTOP/SIGCONT";
        }

        @Override
        public String target() {
            return cluster;
        }
    }

    /** SIGTERM (a clean stop), and a restart on the same data directory at the heal. */
    record Terminate(String cluster) implements Fault {
        @Override
        public String name() {
            return "SIGTERM and restart";
        }

        @Override
        public String target() {
            return cluster;
        }
    }

    /** SIGKILL, and a restart on the same data directory at the heal. */
    record Kill(String cluster) implements Fault {
        @Override
        public String name() {
            return "SIGKILL and restart";
        }

        @Override
        public String target() {
            return cluster;
        }
    }

    /** Two distinct clusters drawn from {@code clusters}. */
    static List<String> pair(List<String> clusters, Random random) {
        int a = random.nextInt(clusters.size());
        int b = (a + 1 + random.nextInt(clusters.size() - 1)) % clusters.size();
        return List.of(clusters.get(a), clusters.get(b));
    }

    static String one(List<String> clusters, Random random) {
        return clusters.get(random.nextInt(clusters.size()));
    }
}
