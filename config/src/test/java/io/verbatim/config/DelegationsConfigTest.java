package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The admin's listener delegation in the YAML: {@code metadataLog}'s knobs and {@code clusters[].delegations}. */
class DelegationsConfigTest {
    private static VerbatimConfig parse(String east, String log) {
        return VerbatimConfig.parse("""
                clusters:
                  - name: east
                    token: t-east
                    brokers: 3
                %s
                  - name: west
                    token: t-west
                metadataLog: {%s}
                """.formatted(east.isEmpty() ? "" : "    " + east, log));
    }

    @Test
    void anInProcessLogAssignsItsBrokersListenersToItsThreeVoters() {
        VerbatimConfig c = parse("delegations: {b0: c2, b1: c3, b2: c2}", "enabled: true");
        ClusterConfig east = c.cluster("east");
        assertThat(east.metadataVoters()).containsExactly("c1", "c2", "c3");
        assertThat(east.metadataListeners()).containsExactly("b0", "b1", "b2");
        assertThat(east.delegations()).isEqualTo(Map.of("b0", "c2", "b1", "c3", "b2", "c2"));
        assertThat(c.cluster("west").delegations()).isEmpty();
        assertThat(c.metadataLog().enabled()).isTrue();
    }

    @Test
    void theKnobsDefaultAsTheSeedNamesThemAndTheIntervalCountsInTicks() {
        MetadataLogConfig d = parse("", "").metadataLog();
        assertThat(d.enabled()).isFalse();
        assertThat(d.maxListenersPerFollower()).isEqualTo(5);
        assertThat(d.followerLagThreshold()).isEqualTo(100);
        assertThat(d.reassignmentInterval()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.reassignmentTicks()).isEqualTo(600); // 30 s of 50 ms ticks
        assertThat(parse("", "reassignmentInterval: 120ms, tick: 50ms").metadataLog().reassignmentTicks())
                .as("rounded up").isEqualTo(3);
    }

    @Test
    void theSeedsKebabCaseSpellingsAreTheSameKnobs() {
        MetadataLogConfig c = parse("", "enabled: true, max-listeners-per-follower: 3, follower-lag-threshold: 50, "
                + "reassignment-interval: 10s").metadataLog();
        assertThat(c.maxListenersPerFollower()).isEqualTo(3);
        assertThat(c.followerLagThreshold()).isEqualTo(50);
        assertThat(c.reassignmentInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThatThrownBy(() -> parse("", "followerLagThreshold: 5, follower-lag-threshold: 6"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("metadataLog.follower-lag-threshold")
                .hasMessageContaining("also as followerLagThreshold");
        assertThatThrownBy(() -> parse("", "max-listeners-per-follower: 0")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("metadataLog.max-listeners-per-follower");
    }

    @Test
    void theLogTailBeforeASnapshotIsAKnobWithARange() {
        assertThat(parse("", "").metadataLog().timing().logTailEntries()).isEqualTo(1000);
        assertThat(parse("", "logTailEntries: 0").metadataLog().timing().logTailEntries()).isZero();
        assertThatThrownBy(() -> parse("", "logTailEntries: -1")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("metadataLog.logTailEntries").hasMessageContaining("[0, 1000000]");
    }

    @Test
    void separateControllersAssignTheBrokersListenerToAReplica() {
        VerbatimConfig c = VerbatimConfig.parse("""
                clusters:
                  - name: east
                    token: t-east
                    raftPort: 7100
                    delegations: {brokers: c2}
                    controllers:
                      - {id: c1, adminPort: 8101, raftPort: 7101}
                      - {id: c2, adminPort: 8102, raftPort: 7102}
                      - {id: c3, adminPort: 8103, raftPort: 7103}
                  - name: west
                    token: t-west
                metadataLog: {enabled: true}
                """);
        assertThat(c.cluster("east").metadataListeners()).containsExactly("brokers");
        assertThat(c.cluster("east").delegations()).containsEntry("brokers", "c2");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "delegations: {b7: c2}|enabled: true|b7 is not a listener of cluster east's metadata log|[b0, b1, b2]",
        "delegations: {b0: c9}|enabled: true|c9 is not a voter of cluster east's metadata log|[c1, c2, c3]",
        "delegations: {b0: b1}|enabled: true|b1 is not a voter|delegation b0 -> b1",
        "delegations: {b0: 3}|enabled: true|clusters[0].delegations.b0|is not a member id",
        "delegations: [b0]|enabled: true|clusters[0].delegations|not a mapping",
        "delegations: {b0: c2}|enabled: false|clusters[0].delegations|metadataLog.enabled is false",
        "delegations: {b0: c2}||clusters[0].delegations|metadataLog.enabled is false",
        "delegations: {b0: c2, b1: c2}|enabled: true, maxListenersPerFollower: 1|assigns 2 listeners to c2"
                + "|metadataLog.maxListenersPerFollower: 1",
        "|followerLagThreshold: 0|metadataLog.followerLagThreshold|[1, 1000000]",
    })
    void aBadAssignmentIsRefusedNamingTheKeyAndWhatIsWrong(String east, String log, String first, String second) {
        assertThatThrownBy(() -> parse(east == null ? "" : east, log == null ? "" : log))
                .isInstanceOf(ConfigException.class).hasMessageContaining(first).hasMessageContaining(second);
    }
}
