package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.model.Compression;
import io.verbatim.model.Segment;
import io.verbatim.testkit.ReplicationRecorder;
import io.verbatim.testkit.Traffic;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** A cluster loses its controller leader during traffic: a replica takes over, nothing committed or sent is lost. */
class ControllerFailoverTest {
    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void aNewControllerLeaderTakesOverMidTrafficAndEveryMessageArrives() {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: a, token: a-token, brokers: 2}, {name: b, token: b-token}]
                topics: [{name: t, initialSegments: 2, bucketBudget: 4}]
                replication: {startAt: earliest, retry: {initial: 20ms, max: 500ms}}
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 500ms}}
                security: {adminToken: failover-token}
                """));
        ClusterNode a = runtime.cluster("a");
        ClusterNode b = runtime.cluster("b");
        ReplicationRecorder recorder = ReplicationRecorder.attach(runtime.storages("t"), true);
        Traffic traffic = new Traffic(Map.of("a", a.producer("t", Compression.LZ4)::sendNow, "b",
                b.producer("t", Compression.LZ4)::sendNow), 100, 0, 5);
        Segment first = a.layout("t").activeSegments().get(0);
        a.split("t", first.id()).block(Duration.ofSeconds(10));
        long epochBefore = a.layout("t").epoch();
        for (int round = 0; round < 40; round++) {
            traffic.round(20);
            if (round == 15) {
                String killed = a.killControllerLeader();
                assertThat(a.metadataLog()).extracting(MemberStatus::memberId).doesNotContain(killed);
            }
        }
        // A new leader among the two replicas left, holding the committed split.
        MemberStatus leader = Flux.interval(Duration.ofMillis(20)).map(t -> a.metadataLog().stream()
                        .filter(s -> s.role() == MemberRole.LEADER).findFirst())
                .filter(Optional::isPresent).map(Optional::get).blockFirst(Duration.ofSeconds(10));
        assertThat(leader.memberId()).startsWith("c");
        Flux.interval(Duration.ofMillis(20)).filter(t -> a.controllerFailovers() > 0).blockFirst(Duration.ofSeconds(10));
        assertThat(a.registry().get("verbatim.controller.failovers").functionCounter().count()).isGreaterThanOrEqualTo(1);
        assertThat(a.layout("t").epoch()).isGreaterThanOrEqualTo(epochBefore);
        // The new leader controls: once it holds b's state again, its own split goes through and reaches b.
        Segment second = a.layout("t").activeSegments().get(a.layout("t").activeSegments().size() - 1);
        Flux.interval(Duration.ofMillis(20)).filter(t -> !a.controller().deferringOwnChanges())
                .blockFirst(Duration.ofSeconds(20));
        a.split("t", second.id()).block(Duration.ofSeconds(10));
        traffic.round(20);
        runtime.awaitQuiet(Duration.ofSeconds(60)).block();
        assertThat(b.layout("t").activeSegments()).hasSize(4);
        assertThat(recorder.checks(traffic.produced()))
                .allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
    }
}
