package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.ClusterConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.identity.SignedCall;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.model.Layout;
import io.verbatim.net.SigningKey;
import io.verbatim.runtime.broker.BrokerReport;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A cluster's broker members ({@code clusters[].brokerMembers}) on its metadata log, as {@code verbatim node
 * --member broker-2} starts one: the process is listener {@code broker-2} on broker-2's raft port, proving itself
 * with broker-2's secret, and reports as broker-2; the voters know every member's address and key, and start from
 * the default spread of the members over them. Over TCP in one JVM; the storage (Pulsar) is never reached: the
 * metadata log and the reports need none.
 */
class BrokerMembersTest {
    private static final String T = "persistent://public/default/t";

    private final Scheduler timer = Schedulers.newParallel("test-timer", 2, true);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<String, ControllerReplicaNode> replicas = new LinkedHashMap<>();
    private final List<AutoCloseable> open = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        replicas.values().forEach(ControllerReplicaNode::close);
        timer.dispose();
    }

    /** Every port handed out in this JVM: a port freed again may be handed out twice by the system. */
    private static final Set<Integer> TAKEN = ConcurrentHashMap.newKeySet();

    private static int port() throws Exception {
        while (true) {
            try (ServerSocket s = new ServerSocket(0)) {
                if (TAKEN.add(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            }
        }
    }

    private static VerbatimConfig config() throws Exception {
        return VerbatimConfig.parse("""
                storage: pulsar
                clusters:
                  - name: a
                    token: a-token
                    pulsar: {serviceUrl: "pulsar://127.0.0.1:1", adminUrl: "http://127.0.0.1:1"}
                    controllers:
                      - {id: c1, adminPort: %d, raftPort: %d, secret: a-c1-secret}
                      - {id: c2, adminPort: %d, raftPort: %d, secret: a-c2-secret}
                      - {id: c3, adminPort: %d, raftPort: %d, secret: a-c3-secret}
                    brokerMembers:
                      - {id: broker-1, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: a-b1-secret}
                      - {id: broker-2, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: a-b2-secret}
                      - {id: broker-3, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: a-b3-secret}
                  - name: b
                    token: b-token
                    adminPort: %d
                    brokerPorts: [%d]
                    pulsar: {serviceUrl: "pulsar://127.0.0.1:1", adminUrl: "http://127.0.0.1:1", namespace: public/b}
                topics:
                  - {name: %s}
                metadataLog: {enabled: true}
                """.formatted(port(), port(), port(), port(), port(), port(), port(), port(), port(), port(), port(),
                port(), port(), port(), port(), port(), port(), T));
    }

    private ControllerReplicaNode awaitLeader() {
        return Flux.interval(Duration.ofMillis(20)).map(t -> replicas.values().stream()
                .filter(r -> r.leader() instanceof ControllerLeader.Here).findFirst())
                .filter(Optional::isPresent).map(Optional::get).blockFirst(Duration.ofSeconds(30));
    }

    /** An empty report to replica {@code to}, signed as member {@code as} with the key {@code secret} gives. */
    private HttpResponse<String> report(ControllerReplicaNode to, String as, String secret) throws Exception {
        byte[] body = "{\"topics\":{}}".getBytes(StandardCharsets.UTF_8);
        String authorization = SignedCall.authorization("a", MemberKeys.of(as, SigningKey.fromSecret(secret)),
                to.member(), "POST", BrokerReport.PATH, body, System.currentTimeMillis());
        return http.send(HttpRequest.newBuilder(URI.create(to.adminUrl() + BrokerReport.PATH))
                .timeout(Duration.ofSeconds(10)).header("Authorization", authorization)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** What a process started as {@code --member broker-2} knows: its own key, and every member's by id. */
    @Test
    void aBrokerMembersKeysAreItsOwnSecretsAndEveryOtherMembersVerifyingKey() throws Exception {
        VerbatimConfig config = config();
        ClusterConfig a = config.cluster("a");
        MemberKeys keys = NetworkedMember.keys(config, a, "broker-2");
        assertThat(keys.self()).isEqualTo("broker-2");
        assertThat(keys.own().verifying()).isEqualTo(SigningKey.fromSecret("a-b2-secret").verifying());
        assertThat(keys.voters().keySet()).containsExactlyInAnyOrder("c1", "c2", "c3");
        assertThat(keys.listeners()).containsOnlyKeys("broker-1", "broker-2", "broker-3")
                .containsEntry("broker-3", SigningKey.fromSecret("a-b3-secret").verifying());
        assertThat(ControllerReplicaNode.reporters(config, a, "c1")).containsOnlyKeys("broker-1", "broker-2", "broker-3")
                .containsEntry("broker-1", SigningKey.fromSecret("a-b1-secret").verifying());
    }

    @Test
    void aBrokerMemberListensOnItsOwnPortAndReportsAsItselfToTheLeader() throws Exception {
        VerbatimConfig config = config();
        ClusterConfig a = config.cluster("a");
        for (String id : List.of("c1", "c2", "c3")) {
            replicas.put(id, ControllerReplicaNode.start(config, "a", id, dir.resolve(id), timer));
        }
        ControllerLink link = new ControllerLink(config, "a", "broker-2", Optional.empty());
        open.add(link);
        assertThat(link.memberId()).isEqualTo("broker-2");
        ControllerReplicaNode leader = awaitLeader();

        // The leader created the topic; the layout reached broker-2's listener over the member's own raft port.
        Layout first = link.first(T, Duration.ofSeconds(30)).block();
        assertThat(first).isNotNull();
        MemberStatus listener = link.member();
        assertThat(listener.memberId()).isEqualTo("broker-2");
        assertThat(listener.role()).isEqualTo(MemberRole.LISTENER);
        MemberStatus led = leader.metadataLog();
        assertThat(led.group().listenerIds()).containsExactly("broker-1", "broker-2", "broker-3");
        assertThat(led.group().listeners()).extracting(l -> l.address())
                .containsExactly(a.brokerMember("broker-1").orElseThrow().raftAddress(),
                        a.brokerMember("broker-2").orElseThrow().raftAddress(),
                        a.brokerMember("broker-3").orElseThrow().raftAddress());
        assertThat(led.group().delegations()).as("the default spread: no delegations named, delegation on")
                .isEqualTo(Map.of("broker-1", "c1", "broker-2", "c2", "broker-3", "c3"));
        Flux.interval(Duration.ofMillis(20)).filter(t -> leader.metadataLog().peers().stream()
                .anyMatch(p -> p.id().equals("broker-2") && !p.voter() && p.matchIndex() > 0))
                .blockFirst(Duration.ofSeconds(10));

        // Its reports are signed as broker-2 and taken by the leader.
        link.start(Duration.ofMillis(100), whole -> new BrokerReport(Map.of()), untaken -> { }, timer);
        Flux.interval(Duration.ofMillis(20)).filter(t -> !link.reportedTo().isEmpty()).blockFirst(Duration.ofSeconds(20));
        assertThat(link.reportedTo()).isEqualTo(awaitLeader().member());

        // Any configured broker member's report is taken, by its own key only.
        ControllerReplicaNode now = awaitLeader();
        HttpResponse<String> three = report(now, "broker-3", "a-b3-secret");
        assertThat(three.statusCode()).as(three.body()).isEqualTo(200);
        HttpResponse<String> forged = report(now, "broker-3", "a-b1-secret");
        assertThat(forged.statusCode()).isEqualTo(403);
        assertThat(forged.body()).contains("the signature is not member broker-3's over this request");
        HttpResponse<String> single = report(now, "brokers", "a-b1-secret");
        assertThat(single.statusCode()).isEqualTo(403);
        assertThat(single.body()).contains("member 'brokers' may not make this call here")
                .contains("[broker-1, broker-2, broker-3]");
    }
}
