package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.exchange.proto.TopicResult;
import io.verbatim.exchange.proto.TopicState;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Defect 5 over real HTTP: a fleet of a few thousand topics between three clusters whose endpoints read
 * small bodies (16 KiB, one of them 8 KiB), laid out differently on every side, with one topic whose
 * state a peer refuses as invalid, one a peer holds at an epoch its sender lost, and one a peer does not
 * hold. Every push is cut under the receiver's limit, and every other topic converges.
 */
class FleetOverHttpTest {
    private static final int TOPICS = 3000;
    private static final List<String> CLUSTERS = List.of("a", "b", "c");
    private static final ExchangeConfig CONFIG = ExchangeConfig.defaults()
            .withRetry(Duration.ofMillis(20), Duration.ofMillis(200), 0.5).withMaxBodyBytes(16 * 1024);
    private static final int C_LIMIT = 8 * 1024;
    /** a's state of this topic is damaged on the way out: its peers find it invalid. */
    private static final int INVALID = 8;
    /** b holds a state of this topic from a at an epoch a never reached (a lost its store). */
    private static final int STALE = 11;
    /** c does not hold this topic. */
    private static final int UNKNOWN = 15;
    private static final Layout BASE = Layout.initial(4, 16, 0);

    private final Map<String, InMemoryLayoutStore> stores = new LinkedHashMap<>();
    private final Map<String, Controller> controllers = new LinkedHashMap<>();
    private final Map<String, ExchangeServer> servers = new LinkedHashMap<>();
    private final Map<String, String> urls = new HashMap<>();
    private final List<Call> calls = new CopyOnWriteArrayList<>();

    private record Call(String from, String to, int bytes, int status) {
    }

    @AfterEach
    void stop() {
        servers.values().forEach(ExchangeServer::stop);
    }

    static String topic(int i) {
        return "persistent://tenant-" + (i % 7) + "/namespace-" + (i % 3) + "/orders-" + String.format("%06d", i);
    }

    /** Topic {@code i} on {@code cluster}: split on one side, rebucketed on another, deeper on a third. */
    static Layout layout(String cluster, int i) {
        long segment = i % 4;
        return switch (cluster + (i % 6)) {
            case "a2", "a5", "b5", "c5" -> apply(BASE, Mutation.split(segment));
            case "b3" -> apply(BASE, Mutation.rebucket(segment, 8));
            case "c4" -> apply(BASE, Mutation.split((segment + 1) % 4));
            case "a4" -> apply(BASE, Mutation.rebucket((segment + 2) % 4, 16));
            default -> BASE;
        };
    }

    private static Layout apply(Layout l, Mutation m) {
        return l.apply(m, l.epoch(), 0).layoutOrThrow();
    }

    private void start() {
        for (String name : CLUSTERS) {
            InMemoryLayoutStore store = new InMemoryLayoutStore();
            for (int i = 0; i < TOPICS; i++) {
                if (!(name.equals("c") && i == UNKNOWN)) {
                    store.create(topic(i), layout(name, i)).block();
                }
            }
            Set<String> peers = new TreeSet<>(CLUSTERS);
            peers.remove(name);
            Controller c = new Controller(name, peers, Caps.PULSAR_DEFAULTS, store, Schedulers.parallel());
            ExchangeConfig config = name.equals("c") ? CONFIG.withMaxBodyBytes(C_LIMIT) : CONFIG;
            ExchangeServer server = new ExchangeServer(c, config, TestKeys.net(name),
                    Controller.BacklogSource.NONE).start(0);
            stores.put(name, store);
            controllers.put(name, c);
            servers.put(name, server);
            urls.put(name, server.baseUrl());
        }
    }

    /** {@code from}'s calls over HTTP, recorded; a's state of {@link #INVALID} damaged (a bucket count of 3). */
    private ExchangeTransport transport(String from) {
        HttpTransport http = new HttpTransport(urls, TestKeys.client(from));
        return (peer, request) -> {
            ExchangeRequest sent = from.equals("a") ? damaged(request) : request;
            return http.send(peer, sent)
                    .doOnNext(answer -> calls.add(new Call(from, peer, sent.getSerializedSize(), 200)))
                    .doOnError(ExchangeException.class, e -> calls.add(new Call(from, peer, sent.getSerializedSize(),
                            e.status())));
        };
    }

    private static ExchangeRequest damaged(ExchangeRequest request) {
        ExchangeRequest.Builder b = request.toBuilder();
        for (int i = 0; i < b.getTopicsCount(); i++) {
            TopicState t = b.getTopics(i);
            if (t.getTopic().equals(topic(INVALID))) {
                b.setTopics(i, t.toBuilder().setCells(0, t.getCells(0).toBuilder().setBuckets(3)));
            }
        }
        return b.build();
    }

    /** Every cluster pushes its whole state once to every other, one push at a time. */
    private void pushAround() {
        for (String from : CLUSTERS) {
            // A pusher cuts to its own endpoint's limit until a peer tells its own: c reads less, and says so
            // in its answers, or in a 413 before the pusher heard from it.
            Pusher pusher = new Pusher(controllers.get(from), transport(from), ExchangeConfig.defaults()
                    .withRetry(Duration.ofMillis(20), Duration.ofMillis(200), 0.5), Schedulers.parallel());
            for (String to : CLUSTERS) {
                if (!to.equals(from)) {
                    pusher.pushUntilAcknowledged(to).block(Duration.ofSeconds(30));
                }
            }
        }
    }

    private void forgeStaleState() {
        Layout real = layout("a", STALE);
        PeerState forged = new PeerState("a", topic(STALE), 1000, Shape.of(real), ColdMarks.NONE, Caps.PULSAR_DEFAULTS);
        ExchangeResponse answer = controllers.get("b").receive(ExchangeRequest.newBuilder().setCluster("a")
                .addTopics(States.toProto(forged)).build()).block();
        assertThat(answer.getResults(0).getCode()).isEqualTo(TopicResult.Code.ACCEPTED);
    }

    private static RemoteStatus remote(ClusterStatus status, String topic, String peer) {
        return status.topics().get(topic).remotes().get(peer);
    }

    @Test
    void aLargeFleetConvergesOverHttpInCallsUnderEachPeersLimitWhateverOneTopicDoes() {
        start();
        forgeStaleState();
        pushAround();

        for (int i = 0; i < TOPICS; i++) {
            List<Shape> shapes = new ArrayList<>();
            for (String cluster : CLUSTERS) {
                if (!(cluster.equals("c") && i == UNKNOWN)) {
                    shapes.add(Shape.of(layout(cluster, i)));
                }
            }
            Shape join = Join.of(shapes);
            for (String cluster : CLUSTERS) {
                if (cluster.equals("c") && i == UNKNOWN) {
                    continue;
                }
                assertThat(Shape.of(stores.get(cluster).get(topic(i)).block())).as("%s on %s", topic(i), cluster)
                        .isEqualTo(join);
            }
        }

        // Cut under the limit: every call a peer took fit its limit, and the pushers learned it in a few 413s.
        for (Call call : calls) {
            if (call.status() == 200) {
                assertThat(call.bytes()).as("%s", call).isLessThanOrEqualTo(call.to().equals("c") ? C_LIMIT
                        : CONFIG.maxBodyBytes());
            }
        }
        assertThat(calls.stream().filter(c -> c.status() == 413).count()).as("413s").isBetween(1L, 30L);
        assertThat(calls.stream().filter(c -> c.status() != 200 && c.status() != 413)).as("other refusals")
                .allMatch(c -> c.status() == 409);
        assertThat(calls.stream().filter(c -> c.to().equals("c") && c.status() == 200).count())
                .as("calls to c").isGreaterThan(TOPICS * 60L / C_LIMIT);

        // The invalid state was refused by each peer and reported; it did not make the push fail.
        ClusterStatus status = controllers.get("a").status(Controller.BacklogSource.NONE).block();
        for (String peer : List.of("b", "c")) {
            assertThat(remote(status, topic(INVALID), peer).refusedOurState()).as("refused by %s", peer)
                    .hasValueSatisfying(why -> assertThat(why).contains("topic '" + topic(INVALID) + "' from a",
                            "not a power of two"));
            assertThat(remote(status, topic(INVALID + 6), peer).refusedOurState()).as("its neighbour").isEmpty();
        }
        // The stale one: b now holds a's real state of it, which superseded the forged epoch.
        assertThat(controllers.get("b").peerStatesView().get(topic(STALE)).get("a").epoch())
                .isEqualTo(stores.get("a").get(topic(STALE)).block().epoch());
        // The unknown one: c said it does not hold it, and nothing was kept there.
        assertThat(controllers.get("c").peerStatesView()).doesNotContainKey(topic(UNKNOWN));
    }
}
