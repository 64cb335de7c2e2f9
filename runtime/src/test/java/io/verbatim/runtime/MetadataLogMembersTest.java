package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.ClusterConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftRpcRequestProto;
import io.verbatim.metadatalog.proto.RequestVoteRequestProto;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.transport.NettyRaftTransport;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Refusal;
import io.verbatim.net.CapturedLogs;
import io.verbatim.net.SigningKey;
import io.verbatim.runtime.controller.NetworkedMember;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;
import reactor.core.scheduler.Scheduler;

/**
 * Issue 23 (7, 9): the members of a cluster's metadata log, as {@code verbatim node --member} starts them over
 * TCP, each proving who it is with its own secret: one holding another member's secret (the brokers' process
 * above all) cannot pass for a voter, the brokers' listener cannot speak as one, and an even number of voters
 * is warned of at start.
 */
class MetadataLogMembersTest {
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private static int port() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static VerbatimConfig config(int voters) throws Exception {
        StringBuilder controllers = new StringBuilder();
        for (int i = 1; i <= voters; i++) {
            controllers.append("      - {id: c%d, adminPort: %d, raftPort: %d, secret: a-c%d-secret}\n"
                    .formatted(i, port(), port(), i));
        }
        return VerbatimConfig.parse("""
                clusters:
                  - name: a
                    token: a-token
                    brokersSecret: a-brokers-secret
                    raftPort: %d
                    controllers:
                %s  - {name: b, token: b-token}
                """.formatted(port(), controllers));
    }

    private NetworkedMember.Started start(VerbatimConfig config, String member) {
        Scheduler thread = NetworkedMember.thread("a", member);
        NetworkedMember.Started started = NetworkedMember.start(config, config.cluster("a"), member, Optional.empty(),
                new LayoutRegister(), thread);
        open.add(thread::dispose);
        open.add(started.server());
        return started;
    }

    /** A transport that calls itself {@code as} and signs with the key {@code secret} gives, its only peer c1. */
    private NettyRaftTransport dialling(NetworkedMember.Started c1, String as, String secret) {
        MemberKeys keys = MemberKeys.of(as, SigningKey.fromSecret(secret))
                .withVoter("c1", SigningKey.fromSecret("a-c1-secret").verifying());
        NettyRaftTransport t = NettyRaftTransport.builder("a", keys).bind("127.0.0.1", 0)
                .peers(Map.of("c1", "127.0.0.1:" + c1.transport().port())).start();
        open.add(t);
        return t;
    }

    private static RaftMessageProto voteRequest(String from, long term) {
        return RaftMessageProto.newBuilder().setRequestVote(RequestVoteRequestProto.newBuilder()
                .setServerRequest(RaftRpcRequestProto.newBuilder().setRequestorId(from).setReplyId("c1")
                        .setRaftGroupId("a").setCallId(1))
                .setCandidateTerm(term)).build();
    }

    private static void until(String what, BooleanSupplier condition, Runnable meanwhile) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 20s: " + what);
            }
            meanwhile.run();
            Thread.sleep(20);
        }
    }

    @Test
    void theBrokersSecretCannotPassForAVoter() throws Exception {
        NetworkedMember.Started c1 = start(config(3), "c1");
        NettyRaftTransport forger = dialling(c1, "c2", "a-brokers-secret");
        until("c1 refuses the brokers' key claiming c2", () -> c1.transport().metrics().refused(Refusal.BAD_SIGNATURE) > 0,
                () -> forger.send(voteRequest("c2", 99)));
        assertThat(c1.transport().metrics().messagesReceived("c2")).isZero();
        assertThat(c1.server().status().term()).isLessThan(99);
    }

    @Test
    void theBrokersListenerCannotSpeakAsAVoter() throws Exception {
        NetworkedMember.Started c1 = start(config(3), "c1");
        NettyRaftTransport brokers = dialling(c1, "brokers", "a-brokers-secret");
        until("c1 drops the listener's vote request", () -> c1.transport().metrics().dropped(Drop.LISTENER_AS_VOTER) > 0,
                () -> brokers.send(voteRequest("brokers", 99)));
        assertThat(c1.transport().metrics().refused()).as("the brokers proved who they are").isZero();
        assertThat(c1.server().status().term()).isLessThan(99);
    }

    @Test
    void anEvenNumberOfVotersIsWarnedOfAtStartNamingTheKey() throws Exception {
        ClusterConfig two = config(2).cluster("a");
        assertThat(NetworkedMember.evenVoters(0, two)).hasValue("clusters[0].controllers names 2 controller replicas: "
                + "a majority of them is 2, so the metadata log survives 0 failure(s), no more than with 1 (3 would "
                + "survive 1); name an odd number");
        assertThat(NetworkedMember.evenVoters(0, config(4).cluster("a"))).hasValueSatisfying(w -> assertThat(w)
                .contains("names 4").contains("majority of them is 3").contains("survives 1 failure(s), no more than "
                        + "with 3 (5 would survive 2)"));
        assertThat(NetworkedMember.evenVoters(0, config(3).cluster("a"))).isEmpty();
        assertThat(NetworkedMember.evenVoters(1, config(3).cluster("b"))).isEmpty();
        CapturedLogs.clear();
        start(config(2), "c1");
        assertThat(CapturedLogs.lines(l -> l.level() == Level.WARN && l.message().contains("controllers names 2")))
                .hasSize(1);
    }
}
