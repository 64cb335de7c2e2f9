package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.SegmentOwner;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/** The meters of segments' ownership in a cluster of many broker processes. */
public final class OwnershipMetrics {
    /** Segments this broker member acts on now. */
    public static final String ACTING = "verbatim.ownership.acting";
    /** Seconds this broker member's lease still holds. */
    public static final String LEASE_REMAINING = "verbatim.ownership.lease.remaining";
    /** Segments each broker member owns, as a controller replica's replica of the log says (tag {@code owner}). */
    public static final String SEGMENTS = "verbatim.ownership.segments";
    /** Segments being handed over or without an owner now. */
    public static final String MOVING = "verbatim.ownership.moving";
    /** Segments the controller leader moved (balance and drains), and members it expired. */
    public static final String MOVES = "verbatim.ownership.moves";
    public static final String EXPIRIES = "verbatim.ownership.expiries";

    private OwnershipMetrics() {
    }

    /** A broker member's own: what it acts on, and its lease. */
    public static void bindMember(LeasedOwnership ownership, MeterRegistry registry) {
        Gauge.builder(ACTING, ownership, o -> o.acting().size())
                .description("segments this broker member acts on now (owned, its lease holding)").register(registry);
        Gauge.builder(LEASE_REMAINING, ownership, o -> o.leaseRemaining().toMillis() / 1000.0).baseUnit("seconds")
                .description("how long this broker member's lease still holds without another answer from the "
                        + "controller leader").register(registry);
    }

    /** A controller replica's: each member's share and what is moving; the leader's moves and expiries. */
    static void bindReplica(Supplier<OwnershipTable> table, List<String> members, AtomicLong moves, AtomicLong expiries,
            MeterRegistry registry) {
        for (String m : members) {
            Gauge.builder(SEGMENTS, table, t -> t.get().ownedBy(m).size()).tags(Tags.of("owner", m))
                    .description("segments the broker member owns").register(registry);
        }
        Gauge.builder(MOVING, table, t -> t.get().segments().values().stream()
                        .filter(o -> o.phase() != SegmentOwner.Phase.OWNED).count())
                .description("segments being handed over or without an owner").register(registry);
        FunctionCounter.builder(MOVES, moves, AtomicLong::get)
                .description("segments the controller leader moved between broker members").register(registry);
        FunctionCounter.builder(EXPIRIES, expiries, AtomicLong::get)
                .description("broker members the controller leader expired (no report for a lease)").register(registry);
    }
}
