package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.exchange.proto.TopicResult;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.net.Authenticator;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Token;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.netty.http.client.HttpClient;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The status JSON as {@code GET /admin/v2/scalable/status} serves it, byte for byte: the CLI's
 * {@code verbatim status}, the status page and other clusters' tooling read its field names, nesting, value
 * types and which optional fields are present. Virtual time makes every age and lag repeatable.
 */
class StatusJsonTest {
    private static final Caps CAPS = new Caps(64, 256);
    private static final Caps SMALL = new Caps(2, 256);

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final InMemoryLayoutStore store = new InMemoryLayoutStore();
    private ExchangeServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop();
        }
        clock.dispose();
    }

    @Test
    void theStatusJsonKeepsItsShape() throws IOException {
        Controller a = scenario();
        // Status is open by default: no credential is needed to read it.
        NetServer open = TestKeys.net("a");
        server = new ExchangeServer(a, ExchangeConfig.defaults(), open, this::backlog).start(0);
        String json = HttpClient.create().get().uri(server.baseUrl() + ExchangeServer.STATUS_PATH)
                .responseSingle((r, body) -> body.asString(StandardCharsets.UTF_8)).block(Duration.ofSeconds(10));

        Path actual = Path.of("target", "status-json", "cluster-status.json");
        Files.createDirectories(actual.getParent());
        Files.writeString(actual, json);
        assertThat(json).as("written to %s", actual.toAbsolutePath()).isEqualTo(expected("cluster-status.json"));
    }

    /** The same status as values: what the JSON writes as -1, "" or leaves out is empty. */
    @Test
    void theStatusRecordsSayWhatTheJsonSays() {
        ClusterStatus status = scenario().status(this::backlog).block();
        assertThat(status.peers().keySet()).containsExactly("b", "c", "d");
        assertThat(status.peers().get("b")).isEqualTo(new PeerStatus(PeerStatus.Verdict.ANSWERED,
                Optional.of(Duration.ofMillis(800)), Optional.empty()));
        assertThat(status.peers().get("c")).isEqualTo(new PeerStatus(PeerStatus.Verdict.UNSUPPORTED, Optional.empty(),
                Optional.of("404: no exchange endpoint")));
        assertThat(status.peers().get("d").lastHeard()).isEmpty();

        TopicStatus t = status.topics().get("t");
        assertThat(t.convergenceLag()).isEqualTo(Duration.ofMillis(1500));
        assertThat(t.capMismatches()).containsExactly(new CapMismatch("b", "maxSegments", 64, 2));
        assertThat(t.capLimited()).isTrue();
        assertThat(t.coldMarks()).isEqualTo(new MarksBySource(Set.of("8000"), Set.of(), Set.of(), Map.of("8000-ffff", 2)));
        assertThat(t.remotes().get("b").held()).hasValue(new RemoteStatus.Held(2, List.of("0000-1fff/N1",
                "8000-ffff/N2"), List.of("2000-3fff/N1", "4000-7fff/N1"), Duration.ofMillis(800), true));
        assertThat(t.remotes().get("b").acknowledgedEpoch()).hasValue(0);
        assertThat(t.remotes().get("c").held()).isEmpty();
        assertThat(t.remotes().get("c").acknowledgedEpoch()).isEmpty();
        assertThat(t.remotes().get("c").refusedOurState()).isEmpty();

        TopicStatus u = status.topics().get("u");
        assertThat(u.recentChanges()).extracting(LayoutChange::what, LayoutChange::why)
                .containsExactly(Tuple.tuple("split 0000-7fff-0", "own"));
        assertThat(u.remotes().get("b").refusedOurState()).hasValue("topic 'u' from a: bucket count 3 is not a power "
                + "of two");
        assertThat(u.convergenceLag()).isZero();
    }

    /**
     * a holds t and u; b answered (its state of t is split past the cap b names, so a's capped join cannot
     * refine it: diverged, cap-limited, a cap mismatch), c answers 404 (unsupported), d never answered.
     * t carries an operator's cold mark and bucket lowering, u the policy's mark, an own split, and b's
     * refusal of a's state.
     */
    private Controller scenario() {
        Controller a = new Controller("a", Set.of("b", "c", "d"), CAPS, store, clock);
        Layout two = Layout.initial(2, 4, 0);
        store.create("t", two).block();
        store.create("u", two).block();
        Layout bLayout = split(split(two, 0), 2);
        a.receive(ExchangeRequest.newBuilder().setCluster("b").addTopics(States.toProto(PeerState.of("b", "t",
                bLayout, Set.of(), SMALL))).build()).block();
        clock.advanceTimeBy(Duration.ofMillis(700));
        a.failed("c", new ExchangeException(404, "no exchange endpoint"));
        a.markCold("t", 0x8000).block();
        a.markBucketsCold("t", HashRange.fromHexString("8000-ffff"), 2).block();
        a.split("u", 0).block();
        a.policyColdMarks("u", Set.of(0x4000)).block();
        ExchangeRequest sent = a.statesFor("b", List.of("t", "u")).block();
        a.onAnswer("b", sent, ExchangeResponse.newBuilder().setCluster("b")
                .addResults(TopicResult.newBuilder().setTopic("t").setCode(TopicResult.Code.ACCEPTED))
                .addResults(TopicResult.newBuilder().setTopic("u").setCode(TopicResult.Code.INVALID)
                        .setDetail("topic 'u' from a: bucket count 3 is not a power of two"))
                .build()).block();
        clock.advanceTimeBy(Duration.ofMillis(800));
        return a;
    }

    private Map<String, Long> backlog(String topic, String remote) {
        Map<String, Long> backlog = new TreeMap<>();
        store.get(topic).block().segments().values().forEach(s -> backlog.put(s.descriptor(),
                (long) remote.length() * topic.length()));
        return backlog;
    }

    private static Layout split(Layout l, long id) {
        return l.apply(Mutation.split(id), l.epoch(), 0).layoutOrThrow();
    }

    static String expected(String name) throws IOException {
        try (InputStream in = StatusJsonTest.class.getResourceAsStream("/status/" + name)) {
            assertThat(in).as("test resource /status/%s", name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
