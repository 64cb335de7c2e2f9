package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.server.RaftServer;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * A metadata log member's state as gauges, tagged with the member: its term, commit and applied index,
 * last index, whether it leads, and how many times it became leader. (Its transport's and storage's own
 * meters are bound beside these where it has them.) And, from whichever member here leads, each listener's
 * feed: who feeds it, how far behind the commit it is, how often its delegation was revoked.
 */
public final class MetadataLogMetrics {
    static final String TERM = "verbatim.raft.term";
    static final String COMMIT = "verbatim.raft.commit.index";
    static final String APPLIED = "verbatim.raft.applied.index";
    static final String LAST = "verbatim.raft.last.index";
    static final String LEADING = "verbatim.raft.leader";
    static final String ELECTIONS = "verbatim.raft.elections.won";
    public static final String LISTENER_SOURCE = "verbatim.raft.listener.source";
    static final String LISTENER_LAG = "verbatim.raft.listener.lag";
    public static final String LISTENER_REVOCATIONS = "verbatim.raft.listener.revocations";

    private MetadataLogMetrics() {
    }

    /** Binds {@code server}'s gauges; the returned subscription counts elections until disposed. */
    static Disposable bind(RaftServer server, String member, MeterRegistry registry) {
        Gauge.builder(TERM, server, s -> s.memberStatus().term()).tag("member", member)
                .description("the member's current term").register(registry);
        Gauge.builder(COMMIT, server, s -> s.memberStatus().commitIndex()).tag("member", member)
                .description("the highest log index the member knows committed").register(registry);
        Gauge.builder(APPLIED, server, s -> s.memberStatus().appliedIndex()).tag("member", member)
                .description("the highest log index the member applied to its layouts").register(registry);
        Gauge.builder(LAST, server, s -> s.memberStatus().lastIndex()).tag("member", member)
                .description("the member's last log index").register(registry);
        Gauge.builder(LEADING, server, s -> s.memberStatus().leads() ? 1 : 0).tag("member", member)
                .description("1 while the member leads the metadata log").register(registry);
        AtomicLong won = new AtomicLong();
        FunctionCounter.builder(ELECTIONS, won, AtomicLong::get).tag("member", member)
                .description("terms in which the member became leader").register(registry);
        return server.memberStatuses().filter(MemberStatus::leads).map(MemberStatus::term)
                .distinctUntilChanged().subscribe(t -> won.incrementAndGet());
    }

    /**
     * Binds, per listener of {@code group}, what the leader here ({@code leading}: a local member's status
     * while it leads, empty otherwise) knows of its feed: {@value #LISTENER_SOURCE} (1 for the member that
     * feeds it now, tagged {@code source}: the leader or its delegate; 0 for the group's other voters; NaN while no
     * member here leads), {@value #LISTENER_LAG} (entries below the leader's commit) and
     * {@value #LISTENER_REVOCATIONS} (revocations of its delegation by every leader here, counted from
     * {@code statuses}, every local member's). The returned subscription counts until disposed.
     */
    static Disposable bindListeners(Supplier<Optional<MemberStatus>> leading, Flux<MemberStatus> statuses,
            Group group, MeterRegistry registry) {
        Map<String, AtomicLong> revocations = new ConcurrentHashMap<>();
        for (String listener : group.listenerIds()) {
            for (String voter : group.voterIds()) {
                Gauge.builder(LISTENER_SOURCE, leading, l -> l.get().map(s -> feeds(s, listener, voter)).orElse(Double.NaN))
                        .tags("listener", listener, "source", voter).strongReference(true) // a method reference: held here only
                        .description("1 while this member feeds the listener (the leader, or the follower it is "
                                + "delegated to), 0 otherwise; NaN where no member leads")
                        .register(registry);
            }
            Gauge.builder(LISTENER_LAG, leading, l -> l.get().map(s -> lag(s, listener)).orElse(Double.NaN))
                    .tag("listener", listener).strongReference(true)
                    .description("entries between the leader's commit and what the listener is known to hold")
                    .register(registry);
            AtomicLong count = revocations.computeIfAbsent(listener, k -> new AtomicLong());
            FunctionCounter.builder(LISTENER_REVOCATIONS, count, AtomicLong::get).tag("listener", listener)
                    .description("times a leader revoked the listener's delegation and fed it itself")
                    .register(registry);
        }
        // a leader's count is per term: add what each (member, term) counted since it was last seen
        Map<String, long[]> seen = new HashMap<>();
        return statuses.filter(s -> s.leads() && !s.listenerSources().isEmpty())
                .subscribe(s -> {
                    synchronized (seen) {
                        for (MemberStatus.ListenerSource src : s.listenerSources()) {
                            AtomicLong count = revocations.get(src.listener());
                            if (count == null) {
                                continue;
                            }
                            long[] held = seen.computeIfAbsent(s.memberId() + "/" + src.listener(), k -> new long[2]);
                            long before = held[0] == s.term() ? held[1] : 0;
                            if (src.revocations() > before) {
                                count.addAndGet(src.revocations() - before);
                            }
                            held[0] = s.term();
                            held[1] = Math.max(before, src.revocations());
                        }
                    }
                });
    }

    private static double feeds(MemberStatus leader, String listener, String voter) {
        return Delegations.feeds(leader).stream().filter(f -> f.listener().equals(listener)).findFirst()
                .map(f -> f.source().equals(voter) ? 1.0 : 0.0).orElse(Double.NaN);
    }

    private static double lag(MemberStatus leader, String listener) {
        return Delegations.feeds(leader).stream().filter(f -> f.listener().equals(listener) && f.lag() >= 0).findFirst()
                .map(f -> (double) f.lag()).orElse(Double.NaN);
    }
}
