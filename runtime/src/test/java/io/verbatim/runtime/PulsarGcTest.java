package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.ReplicationChecks;
import io.verbatim.testkit.Traffic;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.LocalTime;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Garbage collection on a real broker: a sealed segment every subscription drained goes from both clusters'
 * layouts and its topic from the broker, and stays gone; one a subscription has not read stays, topic and all,
 * until it is read.
 */
class PulsarGcTest {
    static final String TOPIC = "persistent://public/default/gc";
    private static PulsarProcess broker;
    private static final AtomicInteger RUN = new AtomicInteger(100);
    private EmbeddedRuntime runtime;

    @BeforeAll
    static void startBroker() {
        broker = TestPulsar.broker();
    }

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    private static String config(int run) {
        return """
                clusters:
                  - name: a
                    token: a-token
                    pulsar: {serviceUrl: '%1$s', adminUrl: '%2$s', namespace: public/gca-%3$d}
                  - name: b
                    token: b-token
                    pulsar: {serviceUrl: '%1$s', adminUrl: '%2$s', namespace: public/gcb-%3$d}
                topics:
                  - {name: %4$s, initialSegments: 1, bucketBudget: 4}
                replication:
                  startAt: earliest
                  sendTimeout: 10s
                  retry: {initial: 50ms, max: 1s, jitter: 0.5}
                  sealWait: 5s
                exchange:
                  antiEntropyInterval: 500ms
                  retry: {initial: 20ms, max: 500ms}
                security: {adminToken: gc-token}
                storage: {type: pulsar, gcInterval: 200ms}
                """.formatted(broker.serviceUrl(), broker.webUrl(), run, TOPIC);
    }

    @Test
    void aSealedSegmentGoesFromBothLayoutsAndTheBrokerOnlyOnceEverySubscriptionReadIt() throws Exception {
        int run = RUN.incrementAndGet();
        long began = System.nanoTime();
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(config(run)));
        ClusterNode a = runtime.cluster("a");
        ClusterNode b = runtime.cluster("b");
        DeliveryChecks.ConsumerRecorder onA = new DeliveryChecks.ConsumerRecorder("a");
        // a subscription on a whose consumer nobody reads yet: its queue fills, its cursor holds backlog
        Subscription idle = a.subscription(TOPIC, "idle").receiverQueueSize(5).onDispatch(d -> onA.record(d.consumer(), d.segmentId(), d.messages())).subscribe();
        Traffic traffic = new Traffic(Map.of("a", a.producer(TOPIC, Compression.LZ4)::sendNow,
                "b", b.producer(TOPIC, Compression.LZ4)::sendNow), 50, 0, 3);
        for (int i = 0; i < 10; i++) {
            traffic.round(10);
        }
        Segment zero = a.layout(TOPIC).segment(0).orElseThrow();
        String topicA = "\"persistent://public/gca-" + run + "/gc-" + zero.descriptor() + "\"";
        String topicB = "\"persistent://public/gcb-" + run + "/gc-" + zero.descriptor() + "\"";
        assertThat(topics("gca-" + run)).as("made on a").contains(topicA);
        assertThat(topics("gcb-" + run)).as("made on b").contains(topicB);
        phase("produced, splitting", began);
        assertThat(a.split(TOPIC, 0).block(Duration.ofSeconds(30))).isInstanceOf(Outcome.Applied.class);
        phase("split", began);
        for (int i = 0; i < 10; i++) {
            traffic.round(10);
        }
        runtime.awaitQuiet(Duration.ofSeconds(60)).block();
        phase("quiet", began);

        // b has no subscription: once replication both ways drained its old segment, it goes, topic and all
        awaitPruned(b, 0);
        awaitGone("gcb-" + run, topicB);
        phase("pruned on b, its topic deleted", began);
        // on a the idle subscription has not read it: it stays, in the layout and on the broker
        Flux.interval(Duration.ofMillis(200)).take(15).blockLast(Duration.ofSeconds(10)); // many GC rounds
        assertThat(idle.backlog()).isPositive();
        assertThat(a.layout(TOPIC).segment(0)).as("pinned by a subscription's backlog").isPresent();
        assertThat(topics("gca-" + run)).as("its topic is kept").contains(topicA);

        // once read, it drains and goes
        Disposable reading = Flux.range(0, idle.consumers()).flatMap(idle::consumer, idle.consumers()).subscribe();
        try {
            awaitPruned(a, 0);
            awaitGone("gca-" + run, topicA);
            phase("read, pruned on a, its topic deleted", began);
            Flux.interval(Duration.ofMillis(50)).filter(t -> onA.checks(traffic.produced()).stream()
                    .allMatch(ReplicationChecks.Check::passed)).next()
                    .timeout(Duration.ofSeconds(60), Mono.empty()).block();
            assertThat(onA.checks(traffic.produced())).allSatisfy(c -> assertThat(c.passed())
                    .as(c.name() + ": " + c.detail()).isTrue());
            // and nothing asks for it again (a reader reading again would make the topic anew)
            Flux.interval(Duration.ofMillis(200)).take(10).blockLast(Duration.ofSeconds(10));
            assertThat(topics("gca-" + run)).doesNotContain(topicA);
            assertThat(topics("gcb-" + run)).doesNotContain(topicB);
            phase("still gone", began);
        } finally {
            reading.dispose();
        }
        assertThat(EmbeddedRuntimeTest.uncheckedGet(a.adminUrl() + "/metrics"))
                .containsPattern("verbatim_gc_pruned_segments_total\\{[^}]*topic=\"" + TOPIC + "\"[^}]*\\} 1");
    }

    private static void phase(String what, long began) {
        System.out.printf("[pulsar-gc] %s at %d ms (%s)%n", what, (System.nanoTime() - began) / 1_000_000,
                LocalTime.now());
    }

    /** The topics of namespace {@code public/<ns>} as the broker lists them. */
    private static String topics(String ns) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(broker.webUrl() + "/admin/v2/persistent/public/" + ns)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    private static void awaitGone(String ns, String topic) {
        Flux.interval(Duration.ofMillis(100)).filter(t -> {
            try {
                return !topics(ns).contains(topic);
            } catch (Exception e) {
                return false;
            }
        }).next().timeout(Duration.ofSeconds(30), Mono.empty()).block();
        try {
            assertThat(topics(ns)).as("topic %s deleted", topic).doesNotContain(topic);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void awaitPruned(ClusterNode node, long segmentId) {
        Flux.interval(Duration.ofMillis(50)).filter(t -> node.layout(TOPIC).segment(segmentId).isEmpty())
                .next().timeout(Duration.ofSeconds(60), Mono.empty()).block();
        assertThat(node.layout(TOPIC).segment(segmentId)).as("segment %s pruned on %s", segmentId, node.name())
                .isEmpty();
    }
}
