package io.verbatim.metadatalog.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.layoutstore.StaleEpochException;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.raft.RaftStatus;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.LeaderLayoutStore;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.metadatalog.transport.MemoryNetwork;
import io.verbatim.metadatalog.transport.RaftTransport;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/** A group of three voters and two listeners in one JVM, on real threads, through the layout store. */
class RaftServerTest {
    static final List<String> VOTERS = List.of("c1", "c2", "c3");
    static final List<String> LISTENERS = List.of("b1", "b2");

    final MemoryNetwork network = new MemoryNetwork("g", Schedulers.parallel(), new SplittableRandom(7));
    final Map<String, RaftServer> servers = new LinkedHashMap<>();
    final Map<String, LayoutRegister> registers = new LinkedHashMap<>();
    final Map<String, Scheduler> threads = new LinkedHashMap<>();

    static RaftConfigurationProto configuration() {
        RaftConfigurationProto.Builder b = RaftConfigurationProto.newBuilder();
        VOTERS.forEach(v -> b.addPeers(RaftPeerProto.newBuilder().setId(v)));
        LISTENERS.forEach(l -> b.addListeners(RaftPeerProto.newBuilder().setId(l)));
        return b.build();
    }

    /** Member {@code member} ({@link #config}) on fast timing: 10 ms ticks, a snapshot every 50 entries, 2 s reads. */
    static RaftServer.Builder fast(String member) {
        return RaftServer.builder(config(member)).tick(Duration.ofMillis(10)).snapshotEvery(50)
                .readTimeout(Duration.ofSeconds(2));
    }

    Scheduler thread(String member) {
        return threads.computeIfAbsent(member, m -> Schedulers.newSingle("raft-" + m));
    }

    void start(String member) {
        LayoutRegister register = new LayoutRegister();
        servers.put(member, fast(member).group(Group.of(VOTERS, LISTENERS)).storage(RaftStorage.inMemory())
                .transport(network.join(member)).machine(register).scheduler(thread(member)).seed(member.hashCode())
                .start());
        registers.put(member, register);
    }

    @AfterEach
    void stop() {
        servers.values().forEach(RaftServer::close);
        threads.values().forEach(Scheduler::dispose);
    }

    String awaitLeader() {
        return Flux.interval(Duration.ofMillis(5)).map(i -> servers.values().stream().map(RaftServer::status)
                        .filter(s -> s.role() == RaftPeerRole.LEADER).map(RaftStatus::memberId).findFirst())
                .filter(Optional::isPresent).map(Optional::get).blockFirst(Duration.ofSeconds(10));
    }

    /** The leader of the highest term (a cut-off leader may not know it was deposed). */
    Optional<String> leader() {
        return servers.values().stream().map(RaftServer::status).filter(s -> s.role() == RaftPeerRole.LEADER)
                .max(Comparator.comparingLong(RaftStatus::term)).map(RaftStatus::memberId);
    }

    /** Writes through whoever leads now (leadership may move on a loaded machine), watching from {@code watcher}. */
    LayoutStore leaderStore(String watcher) {
        Map<String, RaftLayoutStore> stores = new LinkedHashMap<>();
        servers.keySet().forEach(m -> stores.put(m, store(m)));
        return new LeaderLayoutStore(stores, this::leader, watcher, Duration.ofSeconds(10), Schedulers.parallel());
    }

    RaftLayoutStore store(String member) {
        return new RaftLayoutStore(servers.get(member), registers.get(member));
    }

    static Layout split(Layout l) {
        Segment widest = l.activeSegments().stream()
                .max(Comparator.comparingInt(s -> s.range().size())).orElseThrow();
        return l.apply(Mutation.split(widest.id()), l.epoch(), 0).layoutOrThrow();
    }

    @Test
    void layoutsCommittedOnTheLeaderReachEveryMemberListenersIncluded() {
        VOTERS.forEach(this::start);
        LISTENERS.forEach(this::start);
        awaitLeader();
        Layout one = Layout.initial(1, 4, 0);
        leaderStore("b1").create("t", one).block(Duration.ofSeconds(10));
        Layout two = leaderStore("b1").compareAndSet("t", 0, split(one)).block(Duration.ofSeconds(10));
        for (String member : servers.keySet()) {
            assertThat(store(member).watch("t").filter(l -> l.epoch() == 1).blockFirst(Duration.ofSeconds(5)))
                    .as(member).isEqualTo(two);
        }
        // A linearizable read from a listener: its barrier goes through the leader.
        assertThat(store("b1").get("t").block(Duration.ofSeconds(5))).isEqualTo(two);
        assertThatThrownBy(() -> leaderStore("b1").compareAndSet("t", 0, split(one)).block(Duration.ofSeconds(10)))
                .isInstanceOf(StaleEpochException.class);
    }

    @Test
    void aListenerAddedThroughTheDriverCatchesUpAndTheChangeIsAnsweredAsDone() {
        VOTERS.forEach(this::start);
        start("b1");
        awaitLeader();
        Layout one = Layout.initial(1, 4, 0);
        leaderStore("b1").create("t", one).block(Duration.ofSeconds(10));
        // b2 joins: it starts with no configuration and learns it from the leader.
        LayoutRegister register = new LayoutRegister();
        servers.put("b2", fast("b2").group(Group.of(List.of(), List.of())).storage(RaftStorage.inMemory())
                .transport(network.join("b2")).machine(register).scheduler(thread("b2")).seed(7).start());
        registers.put("b2", register);
        RaftConfigurationProto withB2 = configuration();
        Mono.defer(() -> servers.get(leader().orElseThrow()).setConfiguration(withB2))
                .retryWhen(Retry.backoff(20, Duration.ofMillis(20))
                        .filter(NotLeaderException.class::isInstance))
                .block(Duration.ofSeconds(10));
        assertThat(store("b2").watch("t").blockFirst(Duration.ofSeconds(10))).isEqualTo(one);
        assertThat(servers.get(leader().orElseThrow()).status().configuration().getListenersList())
                .extracting(RaftPeerProto::getId).contains("b2");
    }

    @Test
    void aFollowerOrAListenerRefusesACommandAndNamesTheLeader() {
        VOTERS.forEach(this::start);
        LISTENERS.forEach(this::start);
        awaitLeader();
        Flux.interval(Duration.ofMillis(5)).filter(i -> servers.get("b2").leader().isPresent())
                .blockFirst(Duration.ofSeconds(5));
        assertThatThrownBy(() -> store("b2").create("t", Layout.initial(1, 1, 0)).block(Duration.ofSeconds(5)))
                .isInstanceOfSatisfying(NotLeaderException.class,
                        e -> assertThat(e.leader()).isPresent().get().isIn(VOTERS));
        assertThat(store("b2").getLocal("t").block()).as("nothing was written").isNull();
    }

    @Test
    void whenTheLeaderIsCutOffANewOneTakesOverAndNothingCommittedIsLost() {
        VOTERS.forEach(this::start);
        LISTENERS.forEach(this::start);
        awaitLeader();
        Layout one = Layout.initial(1, 4, 0);
        leaderStore("b1").create("t", one).block(Duration.ofSeconds(10));
        String first = leader().orElseThrow();
        network.isolate(first);
        String second = Flux.interval(Duration.ofMillis(5)).map(i -> servers.values().stream().map(RaftServer::status)
                        .filter(s -> s.role() == RaftPeerRole.LEADER && !s.memberId().equals(first))
                        .map(RaftStatus::memberId).findFirst())
                .filter(Optional::isPresent).map(Optional::get).blockFirst(Duration.ofSeconds(10));
        assertThat(leaderStore("b1").get("t").block(Duration.ofSeconds(10))).isEqualTo(one);
        Layout two = leaderStore("b1").compareAndSet("t", 0, split(one)).block(Duration.ofSeconds(10));
        network.healAll();
        assertThat(store(first).watch("t").filter(l -> l.epoch() == 1).blockFirst(Duration.ofSeconds(10))).isEqualTo(two);
    }

    /** A transport that sends at most {@code max} bytes per message, as TCP's frame limit does. */
    private record Limited(RaftTransport inner, int max)
            implements RaftTransport {
        @Override
        public void send(RaftMessageProto message) {
            inner.send(message);
        }

        @Override
        public Flux<RaftMessageProto> inbound() {
            return inner.inbound();
        }

        @Override
        public int maxMessageBytes() {
            return max;
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    /**
     * Issue 23 (10): a command larger than the transport's largest message was accepted and never sent; the
     * driver takes the transport's limit, so it fails at once naming its size and the limit, and the log
     * goes on. A member whose appends or snapshot chunks could not fit does not start.
     */
    @Test
    void aCommandTooLargeForTheTransportFailsAtOnceNamingItsSizeAndTheLimit() {
        Group one = Group.of(List.of("c1"), List.of());
        assertThatThrownBy(() -> fast("c1").group(one).storage(RaftStorage.inMemory())
                .transport(new Limited(network.join("x"), 100 << 10)).machine(new LayoutRegister())
                .scheduler(thread("c1")).seed(1).start())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxEntriesBytesPerAppend 65536")
                .hasMessageContaining("102400");
        RaftServer server = fast("c1").group(one).storage(RaftStorage.inMemory())
                .transport(new Limited(network.join("c1"), 256 << 10)).machine(new LayoutRegister())
                .scheduler(thread("c1")).seed(1).start();
        servers.put("c1", server);
        awaitLeader();
        ByteString large = ByteString.copyFrom(new byte[300 << 10]);
        assertThatThrownBy(() -> server.submit(large).block(Duration.ofSeconds(5)))
                .isInstanceOf(CommandTooLargeException.class).hasMessageContaining((300 << 10) + " bytes")
                .hasMessageContaining((256 << 10) + " bytes");
        long last = server.status().lastIndex();
        server.submit(ByteString.copyFrom(new byte[200 << 10])).block(Duration.ofSeconds(5));
        // the status is published after the answer
        RaftStatus after = server.statuses().filter(st -> st.appliedIndex() > last).blockFirst(Duration.ofSeconds(5));
        assertThat(after.lastIndex()).as("the refused command took no index").isEqualTo(last + 1);
    }

    /** A member of group {@code g} with a short heartbeat and small appends and snapshot chunks. */
    static RaftConfig config(String member) {
        return RaftConfig.defaults(member, "g").withHeartbeatTicks(2).withMaxEntriesBytesPerAppend(64 << 10)
                .withSnapshotChunkBytes(16 << 10);
    }
}
