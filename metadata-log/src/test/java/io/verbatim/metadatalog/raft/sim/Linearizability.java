package io.verbatim.metadatalog.raft.sim;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A Wing &amp; Gong search, with Lowe's memoization of (linearized set, state), for a history of
 * operations on one compare-and-set register holding an int (initially 0). An operation with an unknown
 * outcome may take effect at any point after its invocation, or never.
 */
final class Linearizability {
    enum Kind { WRITE, CAS, READ }

    /**
     * One operation. {@code response} is {@link Long#MAX_VALUE} for an unknown outcome; {@code ok} is a
     * CAS's answer, {@code value} a read's.
     */
    record Op(int client, Kind kind, int arg, int expect, long invoke, long response, boolean ok, int value) {
        boolean unknown() {
            return response == Long.MAX_VALUE;
        }

        @Override
        public String toString() {
            String what = switch (kind) {
                case WRITE -> "write(" + arg + ")";
                case CAS -> "cas(" + expect + "->" + arg + ")" + (unknown() ? "" : "=" + ok);
                case READ -> "read()=" + value;
            };
            return "c" + client + " " + what + " [" + invoke + ", " + (unknown() ? "?" : response) + "]";
        }
    }

    private record Key(long mask, int state) {
    }

    /** Search states explored before giving up: a history this hard is reported, not waited on. */
    static final int BUDGET = 500_000;
    static int maxExplored;

    private final List<Op> ops;
    private final Set<Key> failed = new HashSet<>();
    private final long mustLinearize;
    private int explored;

    private Linearizability(List<Op> ops) {
        if (ops.size() > 62) {
            throw new IllegalArgumentException("at most 62 operations, was " + ops.size());
        }
        this.ops = ops;
        long m = 0;
        for (int i = 0; i < ops.size(); i++) {
            if (!ops.get(i).unknown()) {
                m |= 1L << i;
            }
        }
        this.mustLinearize = m;
    }

    /**
     * Whether the history is linearizable.
     *
     * @throws IllegalStateException if the search explores more than {@link #BUDGET} states
     */
    static boolean check(List<Op> history) {
        Linearizability l = new Linearizability(history);
        boolean ok = l.search(0, 0);
        maxExplored = Math.max(maxExplored, l.explored);
        return ok;
    }

    private boolean search(long done, int state) {
        if ((done & mustLinearize) == mustLinearize) {
            return true;
        }
        if (++explored > BUDGET) {
            throw new IllegalStateException("the linearizability search passed " + BUDGET + " states");
        }
        Key key = new Key(done, state);
        if (failed.contains(key)) {
            return false;
        }
        long minResponse = Long.MAX_VALUE;
        for (int i = 0; i < ops.size(); i++) {
            if ((done & (1L << i)) == 0) {
                minResponse = Math.min(minResponse, ops.get(i).response());
            }
        }
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if ((done & (1L << i)) != 0 || op.invoke() > minResponse) {
                continue;
            }
            int next;
            switch (op.kind()) {
                case WRITE -> next = op.arg();
                case READ -> {
                    if (op.value() != state) {
                        continue;
                    }
                    next = state;
                }
                default -> {
                    boolean success = state == op.expect();
                    if (!op.unknown() && success != op.ok()) {
                        continue;
                    }
                    next = success ? op.arg() : state;
                }
            }
            if (search(done | (1L << i), next)) {
                return true;
            }
        }
        failed.add(key);
        return false;
    }
}
