package io.verbatim.metadatalog.transport;

import static io.verbatim.metadatalog.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.proto.AppendEntriesReplyProto;
import io.verbatim.metadatalog.proto.InstallSnapshotRequestProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftRpcReplyProto;
import io.verbatim.metadatalog.proto.RaftRpcRequestProto;
import io.verbatim.metadatalog.proto.ReadIndexRequestProto;
import io.verbatim.metadatalog.proto.RequestVoteReplyProto;
import io.verbatim.metadatalog.proto.RequestVoteRequestProto;
import io.verbatim.metadatalog.proto.StartLeaderElectionRequestProto;
import io.verbatim.metadatalog.transport.Messages.Inbox;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Refusal;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.SigningKey;
import java.io.DataInputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Who may speak to a member's server, and as whom: each member proves itself with its own key. */
class NettyRaftTransportSecurityTest {
    private static final String GROUP = "meta";
    private final NettyGroup group = new NettyGroup(GROUP, "a", "b");
    private NettyRaftTransport intruder;

    @AfterEach
    void closeAll() {
        group.close();
        if (intruder != null) {
            intruder.close();
        }
    }

    /** A member calling itself {@code member} of {@code group}, signing with {@code own}, its only peer a. */
    private NettyRaftTransport peerOf(NettyRaftTransport a, String member, String group, SigningKey own) {
        MemberKeys keys = MemberKeys.of(member, own).withVoter("a", NettyGroup.verifying("a"));
        intruder = NettyRaftTransport.builder(group, keys).bind("127.0.0.1", 0)
                .peers(Map.of("a", "127.0.0.1:" + a.port())).start();
        return intruder;
    }

    private void refusedWhileSending(NettyRaftTransport a, NettyRaftTransport from, String group, Refusal reason) {
        try (Inbox atA = new Inbox(a)) {
            Poll.until(reason + " counted", () -> a.metrics().refused(reason) >= 1,
                    () -> from.send(append(from.member(), "a", group, 1)));
            assertThat(atA.size()).isZero();
            assertThat(a.metrics().messagesReceived(from.member())).isZero();
        }
    }

    /** Issue 23 (7): any holder of the group's one secret could claim any member id. Now a member's own key. */
    @Test
    void aMemberWithAnotherSecretCannotClaimToBeB() {
        NettyRaftTransport a = group.start("a");
        group.start("b").close(); // a knows b
        refusedWhileSending(a, peerOf(a, "b", GROUP, NettyGroup.signing("c")), GROUP, Refusal.BAD_SIGNATURE);
        assertThat(a.lastRefusalLine()).contains("not member b's");
    }

    @Test
    void refusesAWrongGroup() {
        NettyRaftTransport a = group.start("a");
        group.start("b").close();
        refusedWhileSending(a, peerOf(a, "b", "another", NettyGroup.signing("b")), "another", Refusal.WRONG_GROUP);
    }

    @Test
    void refusesAMemberThatIsNotAPeer() {
        NettyRaftTransport a = group.start("a");
        refusedWhileSending(a, peerOf(a, "z", GROUP, SigningKey.fromSecret("z's")), GROUP, Refusal.UNKNOWN_MEMBER);
    }

    @Test
    void theGenuineMemberIsWelcomedByAServerThatProvesItselfAndDelivered() throws Exception {
        NettyRaftTransport a = group.start("a");
        group.start("b").close();
        try (Inbox atA = new Inbox(a); RawPeer b = new RawPeer(a.port())) {
            b.hello("b", GROUP, "a");
            assertThat(b.welcome()).containsExactly("a", GROUP);
            assertThat(b.welcomeSignedBy(NettyGroup.verifying("a"))).as("a proved itself").isTrue();
            assertThat(b.welcomeSignedBy(NettyGroup.verifying("b"))).isFalse();
            b.proof(b.signature(NettyGroup.signing("b")));
            b.send(append("b", "a", GROUP, 1));
            Poll.until("a gets b's message", () -> atA.size() >= 1);
        }
    }

    /**
     * Issue 23 (7): the secret went in clear in the HELLO before the server proved anything. Now a client
     * shows nothing of its secret, and sends nothing but its HELLO to a server that cannot prove it is the
     * member it dialled.
     */
    @Test
    void aClientShowsNoSecretAndNothingMoreToAServerThatCannotProveItself() throws Exception {
        try (ServerSocket fake = new ServerSocket(0)) {
            intruder = NettyGroup.builder("b", GROUP).bind("127.0.0.1", 0)
                    .peers(Map.of("a", "127.0.0.1:" + fake.getLocalPort())).start();
            intruder.send(append("b", "a", GROUP, 1));
            try (Socket c = fake.accept()) {
                c.setSoTimeout((int) (Poll.BOUND_SECONDS * 1000));
                DataInputStream in = new DataInputStream(c.getInputStream());
                byte[] hello = new byte[in.readInt()];
                in.readFully(hello);
                String wire = new String(hello, StandardCharsets.ISO_8859_1);
                assertThat(wire).doesNotContain(NettyGroup.secretOf("b"));
                assertThat(hello[0]).isEqualTo(Frames.HELLO);
                Frames.Hello h = Frames.readHello(Unpooled.wrappedBuffer(hello, 1, hello.length - 1));
                assertThat(h.member()).isEqualTo("b");
                assertThat(h.server()).isEqualTo("a");
                // a WELCOME signed by someone else than a (here, by b's own key)
                ByteBuf w = Unpooled.buffer();
                byte[] nonce = Handshake.nonce();
                Frames.writeWelcome(w, "a", GROUP, nonce, NettyGroup.signing("c").sign(Handshake.transcript(
                        Handshake.Role.SERVER, GROUP, "b", "a", h.nonce(), nonce)));
                c.getOutputStream().write(ByteBufUtil.getBytes(w));
                c.getOutputStream().flush();
                assertThat(c.getInputStream().read()).as("b hangs up: no PROOF, no message").isEqualTo(-1);
            }
        }
    }

    /** A handshake recorded and replayed fails: the server's nonce is new, so the old proof signs nothing it asked. */
    @Test
    void aReplayedHandshakeIsRefused() throws Exception {
        NettyRaftTransport a = group.start("a");
        group.start("b").close();
        byte[] nonce = Handshake.nonce();
        byte[] recorded;
        try (RawPeer genuine = new RawPeer(a.port())) {
            genuine.hello("b", GROUP, "a", nonce);
            genuine.welcome();
            recorded = genuine.signature(NettyGroup.signing("b"));
            genuine.proof(recorded);
        }
        try (Inbox atA = new Inbox(a); RawPeer replay = new RawPeer(a.port())) {
            replay.hello("b", GROUP, "a", nonce);
            replay.welcome();
            replay.proof(recorded);
            replay.send(append("b", "a", GROUP, 7));
            assertThat(replay.closedByServer()).isTrue();
            Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.BAD_SIGNATURE) == 1);
            assertThat(atA.size()).isZero();
        }
    }

    @Test
    void dropsAMessageWhoseSenderOrGroupIsNotTheProvenMembers() throws Exception {
        NettyRaftTransport a = group.start("a");
        group.start("b").close();
        try (Inbox atA = new Inbox(a); RawPeer b = new RawPeer(a.port())) {
            b.handshake("b", GROUP, "a");
            b.send(append("c", "a", GROUP, 1)); // b speaking as c
            b.send(append("b", "a", "another", 2));
            b.send(append("b", "z", GROUP, 3));
            b.send(append("b", "a", GROUP, 4));
            Poll.until("a gets b's genuine message", () -> atA.size() >= 1);
            assertThat(atA.callIdsFrom("b")).containsExactly(4L);
            assertThat(atA.size()).isEqualTo(1);
            assertThat(a.metrics().dropped(Drop.SPOOFED_SENDER)).isEqualTo(1);
            assertThat(a.metrics().dropped(Drop.WRONG_GROUP)).isEqualTo(1);
            assertThat(a.metrics().dropped(Drop.MISADDRESSED)).isEqualTo(1);
        }
    }

    private static RaftRpcRequestProto request(String from, String to, long callId) {
        return RaftRpcRequestProto.newBuilder().setRequestorId(from).setReplyId(to).setRaftGroupId(GROUP)
                .setCallId(callId).build();
    }

    private static RaftRpcReplyProto reply(String from, String to, long callId, boolean success) {
        return RaftRpcReplyProto.newBuilder().setRequestorId(to).setReplyId(from).setRaftGroupId(GROUP)
                .setCallId(callId).setSuccess(success).build();
    }

    /**
     * Issue 23 (7): a listener can never speak as a voter. From a member named a listener, a vote asked or
     * granted, an append, a snapshot chunk, a leadership hand-over are dropped; its replies, a vote refused
     * and a forwarded read arrive.
     */
    @Test
    void aListenerCannotSpeakAsAVoter() throws Exception {
        NettyRaftTransport a = group.start("a");
        group.start("l1").close();
        try (Inbox atA = new Inbox(a); RawPeer l1 = new RawPeer(a.port())) {
            l1.handshake("l1", GROUP, "a");
            l1.send(RaftMessageProto.newBuilder().setRequestVote(RequestVoteRequestProto.newBuilder()
                    .setServerRequest(request("l1", "a", 1)).setCandidateTerm(9)).build());
            l1.send(RaftMessageProto.newBuilder().setRequestVoteReply(RequestVoteReplyProto.newBuilder()
                    .setServerReply(reply("l1", "a", 2, true)).setTerm(9)).build());
            l1.send(append("l1", "a", GROUP, 3));
            l1.send(RaftMessageProto.newBuilder().setInstallSnapshot(InstallSnapshotRequestProto.newBuilder()
                    .setServerRequest(request("l1", "a", 4)).setLeaderTerm(9)).build());
            l1.send(RaftMessageProto.newBuilder().setStartLeaderElection(StartLeaderElectionRequestProto.newBuilder()
                    .setServerRequest(request("l1", "a", 5))).build());
            l1.send(RaftMessageProto.newBuilder().setRequestVoteReply(RequestVoteReplyProto.newBuilder()
                    .setServerReply(reply("l1", "a", 6, false)).setTerm(9)).build());
            l1.send(RaftMessageProto.newBuilder().setAppendEntriesReply(AppendEntriesReplyProto.newBuilder()
                    .setServerReply(reply("l1", "a", 7, true)).setTerm(9)).build());
            l1.send(RaftMessageProto.newBuilder().setReadIndex(ReadIndexRequestProto.newBuilder()
                    .setServerRequest(request("l1", "a", 8))).build());
            Poll.until("a gets l1's three listener's messages", () -> atA.size() >= 3);
            assertThat(atA.messages).extracting(RaftMessageProto::getBodyCase).containsExactly(
                    RaftMessageProto.BodyCase.REQUESTVOTEREPLY, RaftMessageProto.BodyCase.APPENDENTRIESREPLY,
                    RaftMessageProto.BodyCase.READINDEX);
            assertThat(a.metrics().dropped(Drop.LISTENER_AS_VOTER)).isEqualTo(5);
        }
    }

    /** Issue 23 (9): a line break in a HELLO's member id wrote a log line of the peer's. */
    @Test
    void whatAPeerSendsIsEscapedInTheRefusalLine() throws Exception {
        NettyRaftTransport a = group.start("a");
        try (RawPeer raw = new RawPeer(a.port())) {
            raw.hello("b\n2026-01-01 INFO member a: welcomed c1", GROUP + "\r\u2028", "a");
            assertThat(raw.closedByServer()).isTrue();
        }
        Poll.until("the refusal counted", () -> a.metrics().refused() == 1);
        assertThat(a.lastRefusalLine()).contains("member 'b\\n2026-01-01 INFO member a: welcomed c1'")
                .contains("group 'meta\\r\\u2028'").doesNotContain("\n").doesNotContain("\r").doesNotContain("\u2028");
    }

    /**
     * Issue 23 (9): 500 wrong HELLOs wrote 500 INFO lines. One line per source address per interval, the
     * next one counting what was not logged; every refusal is counted in the metrics.
     */
    @Test
    void refusalsAreLoggedOncePerSourcePerIntervalAndAllCounted() throws Exception {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        try {
            NettyRaftTransport a = group.start("a", x -> x.scheduler(clock));
            group.start("b").close();
            for (int i = 0; i < 500; i++) {
                try (RawPeer raw = new RawPeer(a.port())) {
                    raw.hello("b", GROUP, "a");
                    raw.welcome();
                    raw.proof(raw.signature(NettyGroup.signing("c")));
                    assertThat(raw.closedByServer()).isTrue();
                }
            }
            Poll.until("every refusal counted", () -> a.metrics().refused(Refusal.BAD_SIGNATURE) == 500);
            assertThat(a.refusalLines()).isEqualTo(1);
            clock.advanceTimeBy(NettyRaftTransport.REFUSAL_LOG_INTERVAL);
            try (RawPeer raw = new RawPeer(a.port())) {
                raw.hello("b", GROUP, "a");
                raw.welcome();
                raw.proof(raw.signature(NettyGroup.signing("c")));
                assertThat(raw.closedByServer()).isTrue();
            }
            Poll.until("the 501st counted", () -> a.metrics().refused(Refusal.BAD_SIGNATURE) == 501);
            assertThat(a.refusalLines()).isEqualTo(2);
            assertThat(a.lastRefusalLine()).contains("(and 499 more from 127.0.0.1 in the last 10s, not logged)");
        } finally {
            clock.dispose();
        }
    }

    @Test
    void refusesAMessageBeforeTheHandshake() throws Exception {
        NettyRaftTransport a = group.start("a");
        try (RawPeer raw = new RawPeer(a.port())) {
            raw.send(append("b", "a", GROUP, 1));
            assertThat(raw.closedByServer()).isTrue();
        }
        Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.BAD_HANDSHAKE) == 1);
        assertThat(a.metrics().dropped(Drop.UNAUTHENTICATED)).isEqualTo(1);
    }

    @Test
    void refusesAMessageInPlaceOfTheProof() throws Exception {
        NettyRaftTransport a = group.start("a");
        group.start("b").close();
        try (Inbox atA = new Inbox(a); RawPeer raw = new RawPeer(a.port())) {
            raw.hello("b", GROUP, "a");
            raw.welcome();
            raw.send(append("b", "a", GROUP, 1));
            assertThat(raw.closedByServer()).isTrue();
            Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.BAD_HANDSHAKE) == 1);
            assertThat(atA.size()).isZero();
        }
    }

    @Test
    void closesAConnectionThatNeverHandshakesAfterTheTimeout() throws Exception {
        NettyRaftTransport a = group.start("a", b -> b.handshakeTimeout(Duration.ofMillis(200)));
        try (RawPeer silent = new RawPeer(a.port())) {
            assertThat(silent.closedByServer()).isTrue();
        }
        Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.NO_HANDSHAKE) == 1);
    }

    @Test
    void refusesConnectionsOverThePortsLimit() throws Exception {
        NettyRaftTransport a = group.start("a", b -> b.limits(NetworkLimits.defaults()
                .withMaxConnectionsPerPort(1)));
        group.start("b").close();
        try (RawPeer first = new RawPeer(a.port())) {
            first.hello("b", GROUP, "a");
            first.welcome(); // the first is counted before the second is accepted
            try (RawPeer second = new RawPeer(a.port())) {
                assertThat(second.closedByServer()).isTrue();
            }
            Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.OVER_LIMIT) == 1);
            assertThat(a.metrics().refused()).isEqualTo(1);
        }
    }
}
