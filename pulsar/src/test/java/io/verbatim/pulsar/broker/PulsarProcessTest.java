package io.verbatim.pulsar.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;

/**
 * The shared broker process ({@link TestBroker}) driven through the shaded client and admin client this module
 * uses, and the launcher's errors. Restarts on kept data are in {@link PulsarProcessRestartTest}.
 */
class PulsarProcessTest {
    static final String SUBSCRIPTION = "verbatim.durable";

    @Test
    void aMessageProducedThroughTheShadedClientIsConsumed() throws Exception {
        PulsarProcess broker = TestBroker.shared();
        String topic = "persistent://public/default/process-" + System.nanoTime();
        try (PulsarClient client = PulsarClient.builder().serviceUrl(broker.serviceUrl()).build();
             Consumer<String> consumer = subscribe(client, topic);
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create()) {
            producer.send("hello");
            Message<String> received = consumer.receive(10, TimeUnit.SECONDS);
            assertThat(received).isNotNull();
            assertThat(received.getValue()).isEqualTo("hello");
            consumer.acknowledge(received);
        }
    }

    @Test
    void theAdminClientCreatesANamespace() throws Exception {
        PulsarProcess broker = TestBroker.shared();
        String namespace = "public/process-" + System.nanoTime();
        try (PulsarAdmin admin = PulsarAdmin.builder().serviceHttpUrl(broker.webUrl()).build()) {
            admin.namespaces().createNamespace(namespace);
            admin.namespaces().setDeduplicationStatus(namespace, true);
            assertThat(admin.namespaces().getNamespaces("public")).contains(namespace);
            assertThat(admin.namespaces().getPolicies(namespace).deduplicationEnabled).isTrue();
        }
    }

    @Test
    void aMissingClasspathFileFailsFastNamingIt() {
        Path missing = Path.of("target", "no-such-standalone.classpath");
        PulsarProcess.Options options = PulsarProcess.Options.of(Path.of("target", "pulsar-never-started"))
                .withClasspathFile(missing);
        assertThatThrownBy(() -> PulsarProcess.start(options))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(missing.toAbsolutePath().toString())
                .hasMessageContaining("build pulsar-standalone first");
    }

    @Test
    void anUnknownBrokerSettingFailsNamingItAndTheLog() {
        Path data = Path.of("target", "pulsar-bad-conf-" + ProcessHandle.current().pid()).toAbsolutePath();
        PulsarProcess.Options options = PulsarProcess.Options.of(data).withConf("noSuchBrokerSetting", "1")
                .withStartTimeout(Duration.ofSeconds(30));
        assertThatThrownBy(() -> PulsarProcess.start(options))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("exited before it was ready (exit code 2)")
                .hasMessageContaining(data.resolve("broker.log").toString())
                .hasMessageContaining("noSuchBrokerSetting: no such ServiceConfiguration property");
    }

    @Test
    void badOptionsAreRefusedNamingTheOption() {
        PulsarProcess.Options options = PulsarProcess.Options.of(Path.of("target"));
        assertThatThrownBy(() -> options.withHeap("lots")).hasMessageContaining("heap").hasMessageContaining("lots");
        assertThatThrownBy(() -> options.withPorts(70000, 0)).hasMessageContaining("brokerPort");
        assertThatThrownBy(() -> options.withStartTimeout(Duration.ZERO)).hasMessageContaining("startTimeout");
    }

    static Consumer<String> subscribe(PulsarClient client, String topic) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName(SUBSCRIPTION)
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                .subscribe();
    }
}
