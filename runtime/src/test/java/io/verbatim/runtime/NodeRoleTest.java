package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.BrokerMember;
import io.verbatim.config.ControllerReplica;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.runtime.storage.PulsarTopicStorage;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What {@code verbatim node --cluster C --member M} runs, decided from the file before anything starts. */
class NodeRoleTest {
    private static final VerbatimConfig MEMBERS = VerbatimConfig.parse("""
            storage: pulsar
            clusters:
              - name: a
                token: a-token
                pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080"}
                controllers:
                  - {id: c1, adminPort: 8101, raftPort: 7101, secret: a-c1-secret}
                  - {id: c2, adminPort: 8102, raftPort: 7102, secret: a-c2-secret}
                  - {id: c3, adminPort: 8103, raftPort: 7103, secret: a-c3-secret}
                brokerMembers:
                  - {id: broker-1, adminPort: 8111, brokerPorts: [6661], raftPort: 7111, secret: a-b1-secret}
                  - {id: broker-2, adminPort: 8112, brokerPorts: [6662, 6672], raftPort: 7112, secret: a-b2-secret,
                     advertisedAddress: a-2.example.net}
                  - {id: broker-3, adminPort: 8113, brokerPorts: [6663], raftPort: 7113, secret: a-b3-secret}
              - name: b
                token: b-token
                adminPort: 8082
                brokerPorts: [6653]
                pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080", namespace: public/b}
            """);

    @Test
    void aBrokerMembersProcessRunsThatMemberOnItsOwnPorts() {
        Node.Role role = Node.role(MEMBERS, "a", Optional.of("broker-2"));
        assertThat(role).isEqualTo(new Node.Role.Broker(new BrokerMember("broker-2", "127.0.0.1", "a-2.example.net",
                8112, List.of(6662, 6672), 7112)));
        assertThat(Node.role(MEMBERS, "a", Optional.of("c2"))).isInstanceOfSatisfying(Node.Role.Voter.class,
                v -> assertThat(v.replica().raftPort()).isEqualTo(7102));
        assertThat(Node.role(MEMBERS, "b", Optional.empty())).isInstanceOf(Node.Role.Whole.class);
    }

    @Test
    void aMemberTheFileDoesNotNameIsRefusedNamingTheOnesItDoes() {
        assertThatThrownBy(() -> Node.role(MEMBERS, "a", Optional.of(ControllerReplica.BROKERS)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--member brokers is not a member of a (it has controller replicas [c1, c2, c3] and broker "
                        + "members [broker-1, broker-2, broker-3])");
        assertThatThrownBy(() -> Node.role(MEMBERS, "a", Optional.empty())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("start each with --member c1|c2|c3, and its broker processes with --member "
                        + "broker-1|broker-2|broker-3");
        assertThatThrownBy(() -> Node.role(MEMBERS, "b", Optional.of("broker-1")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clusters[1] (b) names no controllers");
    }

    /** Pulsar keeps one producer of a name per topic: each broker process has its own, the one process its old one. */
    @Test
    void eachBrokerProcessProducesUnderANameOfItsOwn() {
        assertThat(PulsarTopicStorage.producerName("a", "broker-2")).isEqualTo("verbatim.a.broker-2");
        assertThat(PulsarTopicStorage.producerName("a", "broker-3")).isEqualTo("verbatim.a.broker-3");
        assertThat(PulsarTopicStorage.producerName("a", ControllerReplica.BROKERS)).as("what existing topics dedup by")
                .isEqualTo("verbatim.a");
    }
}
