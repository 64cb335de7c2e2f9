package io.verbatim.pulsar.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.common.policies.data.BacklogQuota;
import org.junit.jupiter.api.Test;

/** The broker's command line and its --conf properties, without a broker. */
class BrokerArgsTest {
    @Test
    void everyArgumentIsRead() {
        BrokerArgs args = BrokerArgs.parse("--data", "d", "--bind", "127.0.0.2", "--broker-port", "6650",
                "--web-port", "8080", "--cluster", "east", "--conf", "a=1", "--conf", "b=x=y");
        assertThat(args.dataDir()).isEqualTo(Path.of("d").toAbsolutePath());
        assertThat(args.bindAddress()).isEqualTo("127.0.0.2");
        assertThat(args.brokerPort()).isEqualTo(6650);
        assertThat(args.webPort()).isEqualTo(8080);
        assertThat(args.cluster()).isEqualTo("east");
        assertThat(args.conf()).containsExactly(Map.entry("a", "1"), Map.entry("b", "x=y"));
    }

    @Test
    void defaultsAreLoopbackFreePortsAndTheStandaloneCluster() {
        BrokerArgs args = BrokerArgs.parse("--data", "d");
        assertThat(args).isEqualTo(BrokerArgs.of(Path.of("d").toAbsolutePath()));
        assertThat(args.bindAddress()).isEqualTo("127.0.0.1");
        assertThat(args.brokerPort()).isZero();
        assertThat(args.cluster()).isEqualTo("standalone");
    }

    @Test
    void aBadArgumentIsNamed() {
        assertThatThrownBy(BrokerArgs::parse).hasMessageContaining("--data: required");
        assertThatThrownBy(() -> BrokerArgs.parse("--data")).hasMessageContaining("--data: a value is required");
        assertThatThrownBy(() -> BrokerArgs.parse("--data", "d", "--port", "1")).hasMessageContaining("--port");
        assertThatThrownBy(() -> BrokerArgs.parse("--data", "d", "--web-port", "http"))
                .hasMessageContaining("--web-port").hasMessageContaining("http");
        assertThatThrownBy(() -> BrokerArgs.parse("--data", "d", "--broker-port", "70000"))
                .hasMessageContaining("--broker-port").hasMessageContaining("70000");
        assertThatThrownBy(() -> BrokerArgs.parse("--data", "d", "--conf", "novalue"))
                .hasMessageContaining("--conf").hasMessageContaining("novalue");
        assertThatThrownBy(() -> BrokerArgs.parse("--data", "d", "--cluster", " ")).hasMessageContaining("--cluster");
    }

    @Test
    void confSetsServiceConfigurationPropertiesByName() {
        BrokerArgs args = BrokerArgs.of(Path.of("d"))
                .withConf("brokerDeduplicationEnabled", "true")
                .withConf("managedLedgerDefaultMarkDeleteRateLimit", "0")
                .withConf("brokerServicePortTls", "6651")
                .withConf("superUserRoles", "admin,ops")
                .withConf("backlogQuotaDefaultRetentionPolicy", "consumer_backlog_eviction");
        ServiceConfiguration conf = BrokerConfig.of(args, 6650, 8080, "rocksdb:///tmp/m");
        assertThat(conf.isBrokerDeduplicationEnabled()).isTrue();
        assertThat(conf.getManagedLedgerDefaultMarkDeleteRateLimit()).isZero();
        assertThat(conf.getBrokerServicePortTls()).isEqualTo(Optional.of(6651));
        assertThat(conf.getSuperUserRoles()).isEqualTo(Set.of("admin", "ops"));
        assertThat(conf.getBacklogQuotaDefaultRetentionPolicy())
                .isEqualTo(BacklogQuota.RetentionPolicy.consumer_backlog_eviction);
    }

    @Test
    void aDedupSnapshotPerEntryUnlessToldOtherwise() {
        BrokerArgs args = BrokerArgs.of(Path.of("d"));
        assertThat(BrokerConfig.of(args, 1, 2, "rocksdb:///tmp/m").getBrokerDeduplicationEntriesInterval()).isOne();
        BrokerArgs pulsarDefault = args.withConf("brokerDeduplicationEntriesInterval", "1000");
        assertThat(BrokerConfig.of(pulsarDefault, 1, 2, "rocksdb:///tmp/m").getBrokerDeduplicationEntriesInterval())
                .isEqualTo(1000);
    }

    @Test
    void anUnknownPropertyOrABadValueIsNamed() {
        BrokerArgs args = BrokerArgs.of(Path.of("d"));
        assertThatThrownBy(() -> BrokerConfig.validate(args.withConf("noSuchSetting", "1")))
                .hasMessage("--conf noSuchSetting: no such ServiceConfiguration property");
        assertThatThrownBy(() -> BrokerConfig.validate(args.withConf("brokerDeduplicationEntriesInterval", "many")))
                .hasMessageContaining("brokerDeduplicationEntriesInterval").hasMessageContaining("many");
        assertThatThrownBy(() -> BrokerConfig.validate(args.withConf("brokerDeduplicationEnabled", "yes")))
                .hasMessageContaining("brokerDeduplicationEnabled").hasMessageContaining("yes");
        assertThatThrownBy(() -> BrokerConfig.validate(args.withConf("backlogQuotaDefaultRetentionPolicy", "drop")))
                .hasMessageContaining("backlogQuotaDefaultRetentionPolicy").hasMessageContaining("drop");
    }

    @Test
    void tokenAuthenticationAndTlsPortsAreSetByName() {
        BrokerArgs args = BrokerArgs.of(Path.of("d")).withConf("authenticationEnabled", "true")
                .withConf("authenticationProviders",
                        "org.apache.pulsar.broker.authentication.AuthenticationProviderToken")
                .withConf("tokenSecretKey", "data:;base64,AAAA")
                .withConf("superUserRoles", "admin,ops")
                .withConf("brokerServicePortTls", "0");
        var conf = BrokerConfig.of(args, 1, 2, "rocksdb:///tmp/m");
        assertThat(conf.isAuthenticationEnabled()).isTrue();
        assertThat(conf.getAuthenticationProviders())
                .containsExactly("org.apache.pulsar.broker.authentication.AuthenticationProviderToken");
        assertThat(conf.getProperty("tokenSecretKey")).isEqualTo("data:;base64,AAAA"); // the provider reads it so
        assertThat(conf.getSuperUserRoles()).containsExactlyInAnyOrder("admin", "ops");
        assertThat(conf.getBrokerServicePortTls()).contains(0);
        assertThat(conf.getWebServicePortTls()).isEmpty();
    }
}
