package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.ClusterUrls;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.ExchangeMetricsBinder;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.pipeline.SegmentReplicator;
import io.verbatim.testkit.DeliveryChecks;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * R-C11 end to end: a remote whose address answers 404 for the exchange is reported unsupported, probed
 * again every anti-entropy interval and never written to; the same remote reached at its real address is
 * replicated to.
 */
class UnsupportedRemoteTest {
    private static final VerbatimConfig CONFIG = VerbatimConfig.parse("""
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: t}]
            replication: {startAt: earliest}
            exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 200ms}}
            security: {adminToken: r-token}
            """);

    private final Scheduler timer = Schedulers.newParallel("test-timer", 2, true);
    private final Scheduler cpu = Schedulers.newBoundedElastic(2, 1000, "test-cpu");
    private ClusterNode a;
    private ClusterNode b;

    @AfterEach
    void stop() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        timer.dispose();
        cpu.dispose();
    }

    @Test
    void aRemoteWithoutTheExchangeIsReportedProbedAndNeverWrittenTo() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        b = new ClusterNode(CONFIG, "b", timer, cpu).start();
        // a reaches b's "controller" at one of b's brokers: an HTTP server with no exchange endpoint (404).
        ClusterUrls wrong = new ClusterUrls(b.brokerUrls().get(0), b.brokerUrls());
        a.connect(Map.of("b", wrong));
        a.producer("t", Compression.LZ4).sendNow(List.of(Message.of("k",
                DeliveryChecks.payload("a", 0))));

        Flux.interval(Duration.ofMillis(20)).filter(t -> a.controller().isUnsupported("b"))
                .blockFirst(Duration.ofSeconds(10));
        long firstFailures = failedCalls(a, "b");
        Flux.interval(Duration.ofMillis(100)).take(10).blockLast(Duration.ofSeconds(5)); // a second: ~5 probes
        long probes = failedCalls(a, "b") - firstFailures;
        assertThat(probes).as("probed every anti-entropy interval, not hot-looped").isBetween(2L, 10L);

        assertThat(a.replicators()).isNotEmpty().allMatch(r -> r.state() == SegmentReplicator.State.UNSUPPORTED);
        assertThat(b.storage("t").contents().values()).allMatch(List::isEmpty);
        String status = EmbeddedRuntimeTest.get(a.adminUrl() + "/admin/v2/scalable/status");
        assertThat(status).contains("\"exchange\" : \"unsupported\"");
        assertThat(EmbeddedRuntimeTest.get(a.adminUrl() + "/metrics"))
                .contains("verbatim_exchange_peer_unsupported{cluster=\"a\",peer=\"b\"} 1.0");
        assertThat(EmbeddedRuntimeTest.json(a.adminUrl() + "/admin/v2/scalable/status").path("replicators")
                .path("total").asInt()).isEqualTo(a.replicators().size());
    }

    /** The exchange's failed calls to {@code peer}, as the node's registry counts them. */
    private static long failedCalls(ClusterNode node, String peer) {
        return (long) node.registry().get(ExchangeMetricsBinder.CALLS).tags("peer", peer, "outcome", "failure")
                .functionCounter().count();
    }
}
