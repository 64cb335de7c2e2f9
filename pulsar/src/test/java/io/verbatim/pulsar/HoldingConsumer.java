package io.verbatim.pulsar;

import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * A process that holds a topic's exclusive subscription and does nothing else: a former owner, for a test to pause
 * (SIGSTOP) while the broker still counts its consumer. Args: service URL, topic, subscription. Prints
 * {@code holding} once subscribed.
 */
public final class HoldingConsumer {
    private HoldingConsumer() {
    }

    public static void main(String[] args) throws Exception {
        PulsarClient client = PulsarClient.builder().serviceUrl(args[0]).build();
        client.newConsumer().topic(args[1]).subscriptionName(args[2]).subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).receiverQueueSize(1).subscribe();
        System.out.println("holding");
        System.out.flush();
        TimeUnit.DAYS.sleep(1);
    }
}
