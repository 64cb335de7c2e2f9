package io.verbatim.examples;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.EmbeddedRuntime;
import io.verbatim.runtime.broker.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Flux;

/**
 * Embedding Verbatim: two clusters in this process, a message produced on one, consumed on the other.
 * Run with {@code java -cp examples/target/verbatim-demo.jar io.verbatim.examples.EmbeddingExample}.
 */
public final class EmbeddingExample {
    private EmbeddingExample() {
    }

    public static void main(String[] args) {
        VerbatimConfig config = VerbatimConfig.parse("""
                clusters: [{name: us-east, token: us-east-token}, {name: eu-west, token: eu-west-token}]
                topics: [{name: persistent://shop/orders/placed, initialSegments: 2}]
                replication: {startAt: earliest}
                security: {adminToken: example-token}
                """);
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(config)) {
            String topic = "persistent://shop/orders/placed";
            Subscription billing = runtime.cluster("eu-west").subscribe(topic, "billing", 2);
            runtime.cluster("us-east").producer(topic, Compression.LZ4)
                    .send(List.of(Message.of("customer-42", "order 1001".getBytes(StandardCharsets.UTF_8)))).block();
            // Each consumer reads its own queue; the key's bucket decides which one gets the order.
            Subscription.Delivery d = Objects.requireNonNull(Flux.range(0, billing.consumers())
                    .flatMap(billing::consumer).blockFirst(Duration.ofSeconds(10)), "no delivery");
            System.out.printf("eu-west consumer %d got %s from segment %d, bucket %d%n", d.consumer(),
                    new String(d.messages().get(0).payloadBytes(), StandardCharsets.UTF_8), d.segmentId(), d.bucket());
        }
    }
}
