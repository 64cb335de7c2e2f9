package io.verbatim.pulsar.broker;

import static io.verbatim.pulsar.broker.PulsarProcessTest.SUBSCRIPTION;
import static io.verbatim.pulsar.broker.PulsarProcessTest.subscribe;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.junit.jupiter.api.Test;

/**
 * A broker process of its own, killed as a crash would and started again on the same data directory and ports:
 * what it stored and where its durable subscription stood survive (two broker starts, ~25 s).
 */
class PulsarProcessRestartTest {
    @Test
    void aKilledBrokerRestartsOnItsDataWithItsMessagesAndSubscriptionPosition() throws Exception {
        Path data = Path.of("target", "pulsar-restart-" + ProcessHandle.current().pid()).toAbsolutePath();
        // every acknowledgement persisted at once (Pulsar's default is one cursor write a second)
        PulsarProcess.Options options = PulsarProcess.Options.of(data)
                .withConf("managedLedgerDefaultMarkDeleteRateLimit", "0");
        String topic = "persistent://public/default/restart-" + System.nanoTime();
        PulsarProcess first = PulsarProcess.start(options);
        PulsarProcess second = null;
        long t0 = System.nanoTime();
        try {
            try (PulsarClient client = PulsarClient.builder().serviceUrl(first.serviceUrl()).build();
                 PulsarAdmin admin = PulsarAdmin.builder().serviceHttpUrl(first.webUrl()).build();
                 Consumer<String> consumer = subscribe(client, topic);
                 Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
                for (int i = 0; i < 3; i++) {
                    producer.send("m" + i);
                }
                Message<String> m0 = consumer.receive(10, TimeUnit.SECONDS);
                assertThat(m0.getValue()).isEqualTo("m0");
                consumer.acknowledge(m0);
                awaitMarkDelete(admin, topic, (MessageIdImpl) m0.getMessageId());
                // an unload closes the cursor, which stores its position: the kill below cannot outrun it (waiting for
                // the cursor ledger to grow could be met by the write of its starting position, and once was)
                admin.topics().unload(topic);
                System.out.printf("[pulsar] 3 written, 1 acknowledged and persisted in %d ms%n", millisSince(t0));
                first.kill();
                t0 = System.nanoTime();
            }
            System.out.printf("[pulsar] the clients closed on a killed broker in %d ms%n", millisSince(t0));
            assertThat(first.isAlive()).isFalse();

            second = first.restart();
            assertThat(second.serviceUrl()).isEqualTo(first.serviceUrl());
            assertThat(second.webUrl()).isEqualTo(first.webUrl());
            System.out.printf("[pulsar] restarted after a kill in %d ms%n", second.startMillis());
            t0 = System.nanoTime();
            try (PulsarAdmin admin = PulsarAdmin.builder().serviceHttpUrl(second.webUrl()).build()) {
                assertThat(subscriptionsOnceLoaded(admin, topic)).containsExactly(SUBSCRIPTION);
            }
            try (PulsarClient client = PulsarClient.builder().serviceUrl(second.serviceUrl()).build();
                 Consumer<String> consumer = subscribe(client, topic)) {
                // the first read after a kill waits for the topic's ledgers to be recovered: on a busy machine (2 cores
                // shared with the build) that has taken more than 15 s
                Message<String> next = consumer.receive(60, TimeUnit.SECONDS);
                assertThat(next).as("a message after the restart").isNotNull();
                assertThat(next.getValue()).as("m0 was acknowledged before the kill").isEqualTo("m1");
                Message<String> last = consumer.receive(15, TimeUnit.SECONDS);
                assertThat(last.getValue()).isEqualTo("m2");
            }
            System.out.printf("[pulsar] read back after the restart in %d ms%n", millisSince(t0));
        } finally {
            first.close();
            if (second != null) {
                second.close();
            }
        }
    }

    /**
     * The topic's subscriptions, asked until the restarted broker loads the topic: the first load after a kill
     * recovers the ledger the kill left open, and can fail while the bookie is still coming up (seen once on a
     * loaded machine: "Error while recovering ledger error code: -10"); Pulsar loads it again on the next request.
     */
    private static List<String> subscriptionsOnceLoaded(PulsarAdmin admin, String topic) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return admin.topics().getSubscriptions(topic);
            } catch (PulsarAdminException.ServerSideErrorException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                System.out.printf("[pulsar] the topic does not load yet after the restart: %s%n",
                        e.getMessage().lines().findFirst().orElse(""));
                TimeUnit.MILLISECONDS.sleep(200);
            }
        }
    }

    private static long millisSince(long t0) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    /** Waits until the subscription's mark-delete position is {@code acked} (in the broker's memory). */
    private static void awaitMarkDelete(PulsarAdmin admin, String topic,
            MessageIdImpl acked) throws Exception {
        String expected = acked.getLedgerId() + ":" + acked.getEntryId();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            var cursor = admin.topics().getInternalStats(topic).cursors.get(SUBSCRIPTION);
            if (cursor != null && expected.equals(cursor.markDeletePosition)) {
                return;
            }
            assertThat(System.nanoTime()).as("the acknowledgement of %s taken within 10 s", expected).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }
}
