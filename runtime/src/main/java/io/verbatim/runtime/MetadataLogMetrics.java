package io.verbatim.runtime;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.metastore.proto.RaftPeerRole;
import io.verbatim.metastore.server.RaftServer;

/**
 * A metadata log member's state as gauges, tagged with the member: its term, commit and applied index,
 * last index, whether it leads, and how many times it became leader. (Its transport's and storage's own
 * meters are bound beside these where it has them.)
 */
final class MetadataLogMetrics {
    static final String TERM = "verbatim.raft.term";
    static final String COMMIT = "verbatim.raft.commit.index";
    static final String APPLIED = "verbatim.raft.applied.index";
    static final String LAST = "verbatim.raft.last.index";
    static final String LEADING = "verbatim.raft.leader";
    static final String ELECTIONS = "verbatim.raft.elections.won";

    private MetadataLogMetrics() {
    }

    static void bind(RaftServer server, String member, MeterRegistry registry) {
        Gauge.builder(TERM, server, s -> s.status().term()).tag("member", member)
                .description("the member's current term").register(registry);
        Gauge.builder(COMMIT, server, s -> s.status().commitIndex()).tag("member", member)
                .description("the highest log index the member knows committed").register(registry);
        Gauge.builder(APPLIED, server, s -> s.status().appliedIndex()).tag("member", member)
                .description("the highest log index the member applied to its layouts").register(registry);
        Gauge.builder(LAST, server, s -> s.status().lastIndex()).tag("member", member)
                .description("the member's last log index").register(registry);
        Gauge.builder(LEADING, server, s -> s.status().role() == RaftPeerRole.LEADER ? 1 : 0).tag("member", member)
                .description("1 while the member leads the metadata log").register(registry);
        java.util.concurrent.atomic.AtomicLong won = new java.util.concurrent.atomic.AtomicLong();
        server.statuses().filter(s -> s.role() == RaftPeerRole.LEADER).map(s -> s.term()).distinct()
                .subscribe(t -> won.incrementAndGet());
        FunctionCounter.builder(ELECTIONS, won, java.util.concurrent.atomic.AtomicLong::get).tag("member", member)
                .description("terms in which the member became leader").register(registry);
    }
}
