package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.runtime.BlackholeProxy;
import io.verbatim.runtime.TestNet;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import io.verbatim.runtime.storage.TopicStorage;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A replication session and a layout stream across a partition that drops packets silently (no FIN, no RST:
 * {@link BlackholeProxy}): each notices within its ping timeout that it hears nothing, not only when the socket
 * closes, which such a partition never does.
 */
class SessionLivenessTest {
    private static final Heartbeat BEAT = new Heartbeat(Duration.ofMillis(100), Duration.ofMillis(400));
    private final MemorySegments storage = new MemorySegments("b", Layout.initial(1, 1, 0), Schedulers.parallel());
    private final IngestServer server = new IngestServer("b", 0,
            t -> t.equals("t") ? Optional.<TopicStorage>of(new MemoryTopicStorage(storage)) : Optional.empty(),
            List::of, TestNet.server("b"), Set.of("a"), new SimpleMeterRegistry(), IngestServer.Arrival.NONE).start(0);
    private final BlackholeProxy proxy;
    private final NetworkRemote remote;

    SessionLivenessTest() throws IOException {
        proxy = new BlackholeProxy("127.0.0.2", server.port(), new InetSocketAddress("127.0.0.1", server.port()));
        remote = new NetworkRemote("b", "t", List.of("http://127.0.0.2:" + server.port()), TestNet.client("a"),
                Duration.ZERO, BEAT, Schedulers.parallel());
    }

    @AfterEach
    void stop() throws IOException {
        remote.close();
        proxy.close();
        server.stop();
    }

    private static Entry entry(long n) {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0).build(),
                List.of(Message.of("k", ("a/" + n).getBytes())), CompressionType.NONE)
                .restamp(new ReplicationStamp("a", SourcePosition.of(0, n)));
    }

    private static long millisSince(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @Test
    void aSessionCutOffSilentlyFailsItsSendWithinThePingTimeout() {
        ProducerSession session = remote.open(0, "pulsar.repl.a.0");
        assertThat(session.send(entry(0), SourcePosition.of(0, 0)).block(Duration.ofSeconds(5)))
                .isEqualTo(ProducerSession.Receipt.PERSISTED);
        proxy.partition();
        long t0 = System.nanoTime();
        Throwable failure = session.send(entry(1), SourcePosition.of(0, 1)).<Throwable>map(r -> new AssertionError("answered " + r))
                .onErrorResume(e -> Mono.just(e)).block(Duration.ofSeconds(10));
        long ms = millisSince(t0);
        System.out.println("a session cut off silently failed its send after " + ms + " ms (ping timeout 400 ms)");
        assertThat(failure).isInstanceOf(RemoteException.class);
        assertThat(((RemoteException) failure).kind()).isEqualTo(RemoteException.Kind.UNAVAILABLE);
        assertThat(failure).hasMessageContaining("heard nothing");
        assertThat(ms).as("failed once it heard nothing for the ping timeout, not at once").isBetween(250L, 3_000L);
        session.dispose();
    }

    @Test
    void aSessionWhoseOpeningIsNeverAnsweredFailsWithinThePingTimeout() {
        // the first connection of a JVM takes its time (classes load); the layout stream retries until it is through
        assertThat(remote.layouts().blockFirst(Duration.ofSeconds(5))).isNotNull();
        proxy.partition();
        ProducerSession session = remote.open(0, "pulsar.repl.a.0");
        long t0 = System.nanoTime();
        Throwable failure = session.send(entry(0), SourcePosition.of(0, 0)).<Throwable>map(r -> new AssertionError("answered " + r))
                .onErrorResume(e -> Mono.just(e)).block(Duration.ofSeconds(10));
        long ms = millisSince(t0);
        assertThat(failure).isInstanceOf(RemoteException.class).hasMessageContaining("heard nothing");
        assertThat(ms).isBetween(250L, 3_000L);
        session.dispose();
    }

    /**
     * A connection the remote closes (its broker stopped) ends the session at once, not one ping timeout later:
     * the heartbeat is a bound for a silent connection, not a delay added to a closed one.
     */
    @Test
    void aSessionTheRemoteClosesFailsItsSendsAtOnceNotAfterThePingTimeout() {
        NetworkRemote direct = new NetworkRemote("b", "t", List.of(server.baseUrl()), TestNet.client("a"),
                Duration.ofMillis(400), new Heartbeat(Duration.ofSeconds(1), Duration.ofMinutes(1)),
                Schedulers.parallel());
        ProducerSession session = direct.open(0, "pulsar.repl.a.0");
        assertThat(session.send(entry(0), SourcePosition.of(0, 0)).block(Duration.ofSeconds(5)))
                .isEqualTo(ProducerSession.Receipt.PERSISTED);
        var pending = session.send(entry(1), SourcePosition.of(0, 1)); // its receipt half a round trip away
        long t0 = System.nanoTime();
        Throwable failure = pending.<Throwable>map(r -> new AssertionError("answered " + r))
                .onErrorResume(e -> Mono.just(e))
                .doOnSubscribe(s -> server.stop()).block(Duration.ofSeconds(30));
        long ms = millisSince(t0);
        System.out.println("a session whose remote closed failed its send after " + ms + " ms (ping timeout 60 s)");
        assertThat(failure).isInstanceOf(RemoteException.class).hasMessageNotContaining("heard nothing");
        assertThat(((RemoteException) failure).kind()).isEqualTo(RemoteException.Kind.UNAVAILABLE);
        session.dispose();
        direct.close();
    }

    /** A layout stream the remote closes reconnects within its backoff, not one ping timeout later. */
    @Test
    void aLayoutStreamTheRemoteClosesReconnectsAtOnceNotAfterThePingTimeout() {
        NetworkRemote direct = new NetworkRemote("b", "t", List.of(server.baseUrl()), TestNet.client("a"),
                Duration.ZERO, new Heartbeat(Duration.ofSeconds(1), Duration.ofMinutes(1)), Schedulers.parallel());
        assertThat(direct.layouts().blockFirst(Duration.ofSeconds(5))).isEqualTo(storage.layout());
        int before = direct.connects();
        long t0 = System.nanoTime();
        server.stop();
        Flux.interval(Duration.ofMillis(10)).filter(t -> direct.connects() > before)
                .blockFirst(Duration.ofSeconds(30));
        System.out.println("a layout stream whose remote closed tried again after " + millisSince(t0)
                + " ms (ping timeout 60 s)");
        direct.close();
    }

    @Test
    void aLayoutStreamCutOffSilentlyReconnectsAndBringsTheLayoutMadeMeanwhile() {
        assertThat(remote.layouts().blockFirst(Duration.ofSeconds(5))).isEqualTo(storage.layout());
        proxy.partition();
        storage.apply(Mutation.split(0));
        proxy.heal();
        long t0 = System.nanoTime();
        Layout split = remote.layouts().filter(l -> l.epoch() == 1).blockFirst(Duration.ofSeconds(20));
        long ms = millisSince(t0);
        System.out.println("a layout stream cut off silently brought the new layout " + ms + " ms after the heal");
        assertThat(split).isNotNull();
        assertThat(ms).as("the ping timeout, then a reconnect within its backoff (at most 2 s)").isLessThan(3_000L);
        assertThat(remote.connects()).isGreaterThan(1);
    }
}
