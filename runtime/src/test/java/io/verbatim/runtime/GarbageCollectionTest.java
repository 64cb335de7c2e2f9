package io.verbatim.runtime;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.Outcome;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.ReplicationChecks;
import io.verbatim.testkit.ReplicationRecorder;
import io.verbatim.testkit.Traffic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * R-C8 end to end: a sealed segment is deleted once every replication cursor and every subscription
 * drained it, and not before; what consumers and remotes receive is whole all the same.
 */
class GarbageCollectionTest {
    private static final String CONFIG = """
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
            replication: {startAt: earliest, retry: {initial: 20ms, max: 300ms}, sendTimeout: 2s, sealWait: 1s}
            exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
            storage: {deleteConsumed: true, pruneSealed: true, gcInterval: 50ms}
            security: {adminToken: gc-token}
            """;

    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void aSealedSegmentIsDeletedOnlyOnceEveryReplicationCursorAndSubscriptionDrainedIt() {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG));
        ClusterNode a = runtime.cluster("a");
        ClusterNode b = runtime.cluster("b");
        ReplicationRecorder recorder = ReplicationRecorder.attach(runtime.storages("t"), true);
        DeliveryChecks.ConsumerRecorder onA = new DeliveryChecks.ConsumerRecorder("a");
        // A subscription on a whose consumers nobody reads yet: its queues fill, its cursor holds backlog.
        Subscription idle = a.subscription("t", "idle").consumers(2).receiverQueueSize(5).onDispatch(d -> onA.record(d.consumer(), d.segmentId(), d.messages())).subscribe();
        Traffic traffic = new Traffic(Map.of("a", a.producer("t", Compression.LZ4)::sendNow, "b",
                b.producer("t", Compression.LZ4)::sendNow), 50, 0, 3);
        for (int i = 0; i < 20; i++) {
            traffic.round(10);
        }
        assertThat(a.split("t", 0).block()).isInstanceOf(Outcome.Applied.class);
        for (int i = 0; i < 20; i++) {
            traffic.round(10);
        }
        runtime.awaitQuiet(Duration.ofSeconds(30)).block();

        // b has no subscription: once replication both ways drained its old segment, GC deletes it there.
        awaitPruned(b, 0);
        // On a the idle subscription still holds backlog on the sealed segment: it stays.
        assertThat(idle.backlog()).isPositive();
        assertThat(a.layout("t").segment(0)).as("pinned by a subscription's backlog").isPresent();
        assertThat(a.storage("t").log(0).entries()).as("what the subscription has not read is kept").isNotEmpty();

        // Once its consumers read, the segment drains and goes; children are read after it, in order.
        Disposable reading = Flux.range(0, idle.consumers()).flatMap(idle::consumer, idle.consumers()).subscribe();
        awaitPruned(a, 0);
        Flux.interval(Duration.ofMillis(20)).filter(t -> idle.backlog() == 0).blockFirst(Duration.ofSeconds(20));
        reading.dispose();

        List<ReplicationChecks.Check> checks = new ArrayList<>(recorder.checks(traffic.produced()));
        checks.addAll(onA.checks(traffic.produced()));
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
        assertThat(EmbeddedRuntimeTest.uncheckedGet(a.adminUrl() + "/metrics"))
                .containsPattern("verbatim_gc_pruned_segments_total\\{[^}]*topic=\"t\"[^}]*\\} [1-9]");
    }

    @Test
    void replicationBacklogToARemoteThatIsDownPinsTheSealedSegment() {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG));
        ClusterNode a = runtime.cluster("a");
        ClusterNode b = runtime.cluster("b");
        ReplicationRecorder recorder = ReplicationRecorder.attach(runtime.storages("t"), true);
        Traffic traffic = new Traffic(Map.of("a", a.producer("t", Compression.LZ4)::sendNow), 50, 0, 5);
        b.stopIngest();
        for (int i = 0; i < 10; i++) {
            traffic.round(10);
        }
        assertThat(a.split("t", 0).block()).isInstanceOf(Outcome.Applied.class);
        traffic.round(10);
        // GC runs every 50 ms: give it many rounds. The sealed segment's entries have not reached b.
        Flux.interval(Duration.ofMillis(50)).take(10).blockLast(Duration.ofSeconds(5));
        assertThat(a.layout("t").segment(0)).as("pinned by replication backlog toward b").isPresent();
        assertThat(a.storage("t").sealedSegmentsPinned(0)).isEqualTo(1);

        b.restartIngest();
        runtime.awaitQuiet(Duration.ofSeconds(30)).block();
        awaitPruned(a, 0);
        List<ReplicationChecks.Check> checks = recorder.checks(traffic.produced());
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
    }

    private static void awaitPruned(ClusterNode node, long segmentId) {
        Flux.interval(Duration.ofMillis(20)).filter(t -> node.layout("t").segment(segmentId).isEmpty())
                .blockFirst(Duration.ofSeconds(20));
        assertThat(node.layout("t").segment(segmentId)).as("segment %s pruned on %s", segmentId, node.name()).isEmpty();
    }
}
