package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
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
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.runtime.proto.IngestReply;
import io.verbatim.runtime.proto.IngestSend;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** The ingest endpoint over real WebSockets: the destination's rules hold across the network. */
class IngestServerTest {
    private static final String TOPIC = "t";
    private static final String TOKEN = "ingest-token";

    private final MemoryCluster storage = new MemoryCluster("b", Layout.initial(1, 1, 0), Schedulers.parallel());
    private final IngestServer server = new IngestServer("b", 0, t -> t.equals(TOPIC) ? storage : null,
            () -> List.of(), TOKEN, ClusterNode.MAX_FRAME_BYTES, new SimpleMeterRegistry(), IngestServer.Arrival.NONE).start(0);

    @AfterEach
    void stop() {
        server.stop();
    }

    private static Entry entry(String key, long n) {
        Entry e = Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0)
                .build(), List.of(Message.of(key, ("m" + n).getBytes())), CompressionType.LZ4);
        return e.restamp(new ReplicationStamp("a", SourcePosition.of(0, n)));
    }

    private static IngestSend send(long seq, long entryId) {
        return IngestSend.newBuilder().setSequence(seq).setLedgerId(0).setEntryId(entryId).setPart(-1)
                .setEntry(ByteString.copyFrom(entry("k", entryId).toByteArray())).build();
    }

    /** Sends raw frames on one session and collects the replies. */
    private List<IngestReply> exchange(List<byte[]> frames) {
        return reactor.netty.http.client.HttpClient.create()
                .headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + TOKEN)).websocket()
                .uri(server.baseUrl() + IngestServer.SESSION_PATH + "?topic=t&segment=0&producer=pulsar.repl.a.0")
                .handle((in, out) -> out.send(Flux.fromIterable(frames).map(Unpooled::wrappedBuffer)).then()
                        .thenMany(in.receive().asByteArray().take(frames.size())))
                .map(bytes -> {
                    try {
                        return IngestReply.parseFrom(bytes);
                    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                        throw new IllegalStateException(e);
                    }
                }).take(Duration.ofSeconds(5)).collectList().block();
    }

    @Test
    void entriesArePersistedOnceAndAGapRefusesTheRestOfTheSession() {
        List<IngestReply> replies = exchange(List.of(send(0, 0).toByteArray(), send(1, 1).toByteArray(),
                send(2, 1).toByteArray(), send(4, 2).toByteArray(), send(5, 3).toByteArray()));
        assertThat(replies).extracting(IngestReply::getResult).containsExactly(IngestReply.Result.PERSISTED,
                IngestReply.Result.PERSISTED, IngestReply.Result.DUPLICATE, IngestReply.Result.OUT_OF_ORDER,
                IngestReply.Result.OUT_OF_ORDER);
        assertThat(replies.get(3).getDetail()).contains("expected sequence 3, got 4");
        assertThat(storage.log(0).entries()).hasSize(2);
    }

    @Test
    void malformedFramesAndEntriesAreRefusedWithWhatWasWrongAndStoreNothing() {
        assertThat(exchange(List.of(new byte[] {1, 2, 3}))).singleElement().satisfies(r -> {
            assertThat(r.getResult()).isEqualTo(IngestReply.Result.MALFORMED);
            assertThat(r.getDetail()).contains("not an IngestSend");
        });
        byte[] corrupt = entry("k", 0).toByteArray();
        corrupt[corrupt.length - 1] ^= 0x55;
        IngestSend bad = IngestSend.newBuilder().setSequence(0).setLedgerId(0).setEntryId(0).setPart(-1)
                .setEntry(ByteString.copyFrom(corrupt)).build();
        assertThat(exchange(List.of(bad.toByteArray()))).singleElement().satisfies(r -> {
            assertThat(r.getResult()).isEqualTo(IngestReply.Result.MALFORMED);
            assertThat(r.getDetail()).contains("0:0 is unusable").containsIgnoringCase("checksum");
        });
        assertThat(storage.log(0).entries()).isEmpty();
    }

    @Test
    void callsWithoutTheBrokerRoleOrForUnknownTopicsAreRefusedBeforeAnyUpgrade() throws Exception {
        String base = server.baseUrl() + IngestServer.SESSION_PATH;
        assertThat(get(base + "?topic=t&segment=0&producer=p", null)).startsWith("401:").contains("broker role");
        assertThat(get(base + "?topic=t&segment=0&producer=p", "nope")).startsWith("403:");
        assertThat(get(base + "?topic=other&segment=0&producer=p", TOKEN)).startsWith("404:").contains("'other'");
        assertThat(get(base + "?topic=t&segment=x&producer=p", TOKEN)).startsWith("400:").contains("'x'");
        assertThat(get(base + "?topic=t&segment=0", TOKEN)).startsWith("400:").contains("producer name");
    }

    @Test
    void theClientSessionCarriesReceiptsAndRefusalsAsThePipelineExpects() {
        NetworkRemote remote = new NetworkRemote("b", TOPIC, List.of(server.baseUrl()), TOKEN,
                ClusterNode.MAX_FRAME_BYTES, Duration.ZERO, Schedulers.parallel());
        StepVerifier.create(remote.layouts().take(1)).assertNext(l -> assertThat(l).isEqualTo(storage.layout()))
                .verifyComplete();
        ProducerSession session = remote.open(0, "pulsar.repl.a.0");
        StepVerifier.create(session.send(entry("k", 0), SourcePosition.of(0, 0)))
                .expectNext(ProducerSession.Receipt.PERSISTED).verifyComplete();
        StepVerifier.create(session.send(entry("k", 0), SourcePosition.of(0, 0)))
                .expectNext(ProducerSession.Receipt.DUPLICATE).verifyComplete();
        storage.apply(Mutation.split(0));
        StepVerifier.create(session.send(entry("k", 1), SourcePosition.of(0, 1)))
                .expectErrorSatisfies(e -> assertThat(RemoteException.isSealed(e)).isTrue()).verify(Duration.ofSeconds(5));
        StepVerifier.create(session.send(entry("k", 2), SourcePosition.of(0, 2)))
                .expectErrorSatisfies(e -> assertThat(((RemoteException) e).kind())
                        .isEqualTo(RemoteException.Kind.SESSION_BROKEN)).verify(Duration.ofSeconds(5));
        session.dispose();
        // The new layout reaches the remote's stream.
        StepVerifier.create(remote.layouts().filter(l -> l.epoch() == 1).take(1)).expectNextCount(1)
                .verifyComplete();
    }

    @Test
    void aLostConnectionFailsEverySendUnderWay() {
        NetworkRemote remote = new NetworkRemote("b", TOPIC, List.of(server.baseUrl()), TOKEN,
                ClusterNode.MAX_FRAME_BYTES, Duration.ofMillis(400), Schedulers.parallel());
        ProducerSession session = remote.open(0, "pulsar.repl.a.0");
        var pending = session.send(entry("k", 0), SourcePosition.of(0, 0));
        StepVerifier.create(pending).then(server::stop)
                .expectErrorSatisfies(e -> assertThat(((RemoteException) e).kind())
                        .isEqualTo(RemoteException.Kind.UNAVAILABLE)).verify(Duration.ofSeconds(5));
        session.dispose();
    }

    static String get(String url, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
        return r.statusCode() + ":" + r.body();
    }
}
