package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.EmbeddedRuntime;
import io.verbatim.runtime.broker.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * How an application tests its own flow with StepVerifier: produce on one cluster, expect the messages
 * on the other, per key in order and with one consumer per key.
 */
class ReplicationFlowTest {
    private static final String TOPIC = "persistent://shop/orders/placed";

    @Test
    void ordersPlacedInUsEastReachBillingInEuWestInOrderPerCustomer() {
        VerbatimConfig config = VerbatimConfig.parse("""
                clusters: [{name: us-east, token: us-east-token}, {name: eu-west, token: eu-west-token}]
                topics: [{name: %s, initialSegments: 2, bucketBudget: 8}]
                replication: {startAt: earliest}
                security: {adminToken: flow-token}
                """.formatted(TOPIC));
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(config)) {
            Subscription billing = runtime.cluster("eu-west").subscribe(TOPIC, "billing", 4, true);
            var producer = runtime.cluster("us-east").producer(TOPIC, Compression.LZ4);
            for (int order = 1; order <= 3; order++) {
                producer.send(List.of(Message.of("customer-42", ("order " + order).getBytes(StandardCharsets.UTF_8))))
                        .block();
            }
            int bucket = runtime.cluster("eu-west").layout(TOPIC)
                    .activeSegmentFor(KeyHash.of("customer-42").segmentHash()).buckets()
                    .bucketOf(KeyHash.of("customer-42").hashB());

            StepVerifier.create(billing.deliveries().map(ReplicationFlowTest::payload).take(3))
                    .expectNext("order 1", "order 2", "order 3")
                    .verifyComplete();
            int consumer = billing.deliveries().blockFirst().consumer();
            StepVerifier.create(billing.deliveries().take(3))
                    .thenConsumeWhile(d -> d.bucket() == bucket && d.consumer() == consumer)
                    .verifyComplete();
            // All three went verbatim (counted once the sender has the receipt back).
            var sent = runtime.cluster("us-east").replication(TOPIC, "eu-west");
            assertThat(Flux.interval(Duration.ofMillis(10)).map(t -> sent.verbatimEntries()).filter(n -> n >= 3)
                    .blockFirst(Duration.ofSeconds(10))).isEqualTo(3);
            assertThat(sent.rebatchedEntries()).isZero();
        }
    }

    private static String payload(Subscription.Delivery d) {
        return new String(d.messages().get(0).payloadBytes(), StandardCharsets.UTF_8);
    }
}
