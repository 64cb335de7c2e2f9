package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.net.CapturedLogs;
import io.verbatim.net.NetServer;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.runtime.RawHttp;
import io.verbatim.runtime.TestNet;
import io.verbatim.runtime.proto.IngestReply;
import io.verbatim.runtime.proto.IngestSend;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import io.verbatim.runtime.storage.TopicStorage;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** The ingest endpoint over real WebSockets: the destination's rules hold across the network. */
public class IngestServerTest {
    private static final String TOPIC = "t";

    private final MemorySegments storage = new MemorySegments("b", Layout.initial(1, 4, 0), Schedulers.parallel());
    private final NetServer net = TestNet.server("b");
    private final IngestServer server = new IngestServer("b", 0, t -> t.equals(TOPIC) ? Optional.<TopicStorage>of(new MemoryTopicStorage(storage)) : Optional.empty(),
            () -> List.of(), net, Set.of("a", "c"), new SimpleMeterRegistry(), IngestServer.Arrival.NONE)
            .start(0);

    @AfterEach
    void stop() {
        server.stop();
    }

    private static Entry entry(String key, long n) {
        return entry(List.of(Message.of(key, ("m" + n).getBytes())), "a", SourcePosition.of(0, n));
    }

    private static Entry entry(List<Message> messages, String from, SourcePosition at) {
        Entry e = Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(at.entryId())
                .setPublishTime(0).build(), messages, CompressionType.LZ4);
        return e.restamp(new ReplicationStamp(from, at));
    }

    private static IngestSend send(long seq, long entryId) {
        return send(seq, SourcePosition.of(0, entryId), entry("k", entryId));
    }

    private static IngestSend send(long seq, SourcePosition at, Entry entry) {
        return IngestSend.newBuilder().setSequence(seq).setLedgerId(at.ledgerId()).setEntryId(at.entryId())
                .setPart(at.part()).setEntry(ByteString.copyFrom(entry.toByteArray())).build();
    }

    /** Sends raw frames on one session and collects the replies. */
    private List<IngestReply> exchange(List<byte[]> frames) {
        return exchange(frames, "a", "pulsar.repl.a.0");
    }

    /** As cluster {@code from}, signing the session's handshake. */
    private List<IngestReply> exchange(List<byte[]> frames, String from, String producer) {
        return TestNet.client(from).signing(reactor.netty.http.client.HttpClient.create(), "b").websocket()
                .uri(server.baseUrl() + IngestServer.SESSION_PATH + "?topic=t&segment=0&producer=" + producer)
                .handle((in, out) -> out.send(Flux.fromIterable(frames).map(Unpooled::wrappedBuffer)).then()
                        .thenMany(in.receive().asByteArray().take(frames.size())))
                .map(bytes -> {
                    try {
                        return IngestReply.parseFrom(bytes);
                    } catch (InvalidProtocolBufferException e) {
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
        assertThat(get(base + "?topic=t&segment=0&producer=p", null)).startsWith("401:")
                .contains("a cluster's signature");
        assertThat(get(base + "?topic=t&segment=0&producer=p", "Bearer nope")).startsWith("403:");
        assertThat(get(base + "?topic=t&segment=0&producer=p", "Bearer " + TestNet.token("a"))).as("a's secret in clear")
                .startsWith("403:").contains("clusters sign their calls");
        assertThat(getAs("a", base + "?topic=other&segment=0&producer=p")).startsWith("404:").contains("'other'");
        assertThat(getAs("a", base + "?topic=t&segment=x&producer=p")).startsWith("400:").contains("'x'");
        assertThat(getAs("a", base + "?topic=t&segment=0")).startsWith("400:").contains("producer name");
    }

    @Test
    void onlyAPeerClusterMayOpenASessionAndOnlyUnderItsOwnProducerNames() throws Exception {
        String base = server.baseUrl() + IngestServer.SESSION_PATH + "?topic=t&segment=0&producer=";
        assertThat(getAs("a", base + "pulsar.repl.c.0")).as("a's credential, c's producer").startsWith("403:")
                .contains("producer 'pulsar.repl.c.0' is not one cluster a may use (expected pulsar.repl.a.<source");
        assertThat(getAs("a", base + "pulsar.repl.a.x")).startsWith("403:");
        assertThat(getAs("b", base + "pulsar.repl.b.0")).as("b's own credential").startsWith("403:")
                .contains("cluster b is not a peer of b");
        assertThat(get(base + "pulsar.repl.a.0", "Bearer " + TestNet.ADMIN)).startsWith("403:")
                .contains("the admin may not call the ingest endpoint");
        assertThat(getAs("a", base + "pulsar.repl.a.0")).as("a plain GET, no upgrade").startsWith("426:")
                .contains("is a WebSocket endpoint");
        String target = IngestServer.SESSION_PATH + "?topic=%ZZ&segment=0";
        String badEscape = RawHttp.send(server.baseUrl(), "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: " + TestNet.signed("a", "b", "GET", "http://x" + target) + "\r\nConnection: close\r\n\r\n");
        assertThat(RawHttp.status(badEscape)).isEqualTo(400);
        assertThat(badEscape).contains("parameter 'topic' is not well percent-encoded").doesNotContain("Exception");
        assertThat(storage.log(0).entries()).isEmpty();
    }

    @Test
    void anEntryTheSessionsClusterMayNotSendIsForbiddenNotStoredAndEndsTheSession() {
        Entry ok = entry("k", 0);
        Map<String, IngestSend> forbidden = new LinkedHashMap<>();
        forbidden.put("replicated_from is 'c', but the session is a's",
                send(0, SourcePosition.of(0, 0), entry(List.of(Message.of("k", "m".getBytes())), "c", SourcePosition.of(0, 0))));
        forbidden.put("stamped with source position 0:7, not the send's", send(0, SourcePosition.of(0, 0),
                entry(List.of(Message.of("k", "m".getBytes())), "a", SourcePosition.of(0, 7))));
        forbidden.put("is not inside one bucket of destination segment", send(0, SourcePosition.of(0, 0),
                entry(List.of(Message.of(keyInQuarter(0), "m".getBytes()), Message.of(keyInQuarter(3), "n".getBytes())),
                        "a", SourcePosition.of(0, 0))));
        Entry unstamped = Entry.of(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(0).setPublishTime(0)
                .build(), ByteBuffer.wrap("a/0".getBytes())).restamp(new ReplicationStamp("a", SourcePosition.of(0, 0)));
        forbidden.put("has no stamp", send(0, SourcePosition.of(0, 0), unstamped));
        forbidden.forEach((why, frame) -> assertThat(exchange(List.of(frame.toByteArray(),
                send(1, SourcePosition.of(0, 1), entry("k", 1)).toByteArray()))).as(why).singleElement().satisfies(r -> {
                    assertThat(r.getResult()).isEqualTo(IngestReply.Result.FORBIDDEN);
                    assertThat(r.getDetail()).contains(why);
                }));
        assertThat(storage.log(0).entries()).as("nothing stored, not even what followed on the session").isEmpty();
        assertThat(exchange(List.of(send(0, SourcePosition.of(0, 0), ok).toByteArray())))
                .extracting(IngestReply::getResult).containsExactly(IngestReply.Result.PERSISTED);
    }

    @Test
    void aPositionImplausiblyFarPastTheMarkIsRefusedAndReportedAndTheRestOfTheSessionWithIt() {
        SourcePosition forged = SourcePosition.of(1L << 62, 0);
        List<IngestReply> replies = exchange(List.of(send(0, forged, entry(List.of(Message.of("k", "m".getBytes())),
                "a", forged)).toByteArray(), send(1, SourcePosition.of(0, 0), entry("k", 0)).toByteArray()));
        assertThat(replies).extracting(IngestReply::getResult).containsExactly(IngestReply.Result.IMPLAUSIBLE,
                IngestReply.Result.OUT_OF_ORDER);
        assertThat(replies.get(0).getDetail()).contains("implausibly far past 0:0 (nothing stored yet)");
        assertThat(storage.log(0).entries()).isEmpty();
        assertThat(storage.marks()).as("a refused first send leaves no mark").isEmpty();
        assertThat(exchange(List.of(send(0, SourcePosition.of(0, 0), entry("k", 0)).toByteArray())))
                .as("a new session of the producer's real entries is taken")
                .extracting(IngestReply::getResult).containsExactly(IngestReply.Result.PERSISTED);
    }

    /** A key whose hashB falls in quarter {@code q} of the ring (bucket q of 4). */
    private static String keyInQuarter(int q) {
        for (int i = 0; ; i++) {
            String k = "key-" + i;
            if (KeyHash.of(k).hashB() >>> 14 == q) {
                return k;
            }
        }
    }

    @Test
    void theClientSessionCarriesReceiptsAndRefusalsAsThePipelineExpects() {
        NetworkRemote remote = new NetworkRemote("b", TOPIC, List.of(server.baseUrl()), TestNet.client("a"),
                Duration.ZERO, Heartbeat.DEFAULT, Schedulers.parallel());
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
        NetworkRemote remote = new NetworkRemote("b", TOPIC, List.of(server.baseUrl()), TestNet.client("a"),
                Duration.ofMillis(400), Heartbeat.DEFAULT, Schedulers.parallel());
        ProducerSession session = remote.open(0, "pulsar.repl.a.0");
        var pending = session.send(entry("k", 0), SourcePosition.of(0, 0));
        StepVerifier.create(pending).then(server::stop)
                .expectErrorSatisfies(e -> assertThat(((RemoteException) e).kind())
                        .isEqualTo(RemoteException.Kind.UNAVAILABLE)).verify(Duration.ofSeconds(5));
        session.dispose();
    }

    /** A GET of {@code url} signed by cluster {@code from} for b. */
    private static String getAs(String from, String url) throws Exception {
        return get(url, TestNet.signed(from, "b", "GET", url));
    }

    /** @param authorization the whole Authorization header, or null */
    public static String get(String url, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<String> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
        return r.statusCode() + ":" + r.body();
    }

    @Test
    void aTextFrameIsAnsweredMalformedNamingItAndEndsTheSessionWithOneLineAndNoTrace() throws Exception {
        CapturedLogs.clear();
        List<IngestReply> replies = TestNet.client("a").signing(reactor.netty.http.client.HttpClient.create(), "b")
                .websocket()
                .uri(server.baseUrl() + IngestServer.SESSION_PATH + "?topic=t&segment=0&producer=pulsar.repl.a.0")
                .handle((in, out) -> out.sendString(Flux.just("hello")).then()
                        .thenMany(in.receive().asByteArray()))
                .map(IngestServerTest::reply).take(Duration.ofSeconds(5)).collectList().block();
        assertThat(replies).as("one answer, then the session ended").singleElement().satisfies(r -> {
            assertThat(r.getResult()).isEqualTo(IngestReply.Result.MALFORMED);
            assertThat(r.getDetail()).contains("a text frame");
        });
        Thread.sleep(200); // what the server does after the session ended
        List<CapturedLogs.Line> server = CapturedLogs.lines(l -> !l.logger().startsWith("reactor.netty.http.client"));
        assertThat(server).noneMatch(l -> l.trace() != null || l.level() == Level.ERROR);
        assertThat(server).singleElement().satisfies(l -> assertThat(l.message()).contains("ingest refused a malformed send: a text frame"));
        assertThat(storage.log(0).entries()).isEmpty();
    }

    @Test
    void peerTextInTheRefusalsLineIsEscapedOntoOneLine() {
        CapturedLogs.clear();
        String forged = "a\n2030-01-01 00:00:00 ERROR io.verbatim.runtime.ClusterNode - b: every topic deleted";
        IngestSend send = send(0, SourcePosition.of(0, 0), entry(List.of(Message.of("k", "m".getBytes())), forged,
                SourcePosition.of(0, 0)));
        assertThat(exchange(List.of(send.toByteArray()))).singleElement()
                .satisfies(r -> assertThat(r.getResult()).isEqualTo(IngestReply.Result.FORBIDDEN));
        assertThat(CapturedLogs.lines(l -> l.message().contains("ingest refused"))).singleElement()
                .satisfies(l -> assertThat(l.message()).doesNotContain("\n").contains("'a\\n2030-01-01 00:00:00 ERROR"));
    }

    /**
     * A peer killed or restarting resets its layout stream: the stream ends, with no ERROR line and no trace (the
     * stream's inbound was never read, and Reactor Netty logged the reset as an uncaught ERROR; seen in
     * NodeProcessesTest's restart).
     */
    @Test
    void aLayoutStreamResetByItsPeerEndsWithoutAnErrorLine() throws Exception {
        CapturedLogs.clear();
        URI base = URI.create(server.baseUrl());
        String target = IngestServer.LAYOUTS_PATH + "?topic=t";
        Socket s = new Socket(base.getHost(), base.getPort());
        s.setSoTimeout(5000);
        s.getOutputStream().write(("GET " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: "
                + TestNet.signed("a", "b", "GET", "http://x" + target) + "\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13"
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        DataInputStream in = new DataInputStream(s.getInputStream());
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            head.append((char) in.readUnsignedByte());
        }
        assertThat(head.toString()).startsWith("HTTP/1.1 101 ");
        assertThat(in.readUnsignedByte() & 0x0f).as("the first layout, a binary frame").isEqualTo(2);
        s.setSoLinger(true, 0);
        s.close(); // a reset
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (net.ports().stream().mapToInt(p -> p.open()).sum() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(net.ports().stream().mapToInt(p -> p.open()).sum()).as("the server closed its side").isZero();
        assertThat(CapturedLogs.lines(l -> l.level() == Level.ERROR || l.trace() != null)).isEmpty();
    }

    @Test
    void aFrameWithRsv1SetFailsTheSessionWithAProtocolErrorAndStoresNothing() throws Exception {
        URI base = URI.create(server.baseUrl());
        try (Socket s = new Socket(base.getHost(), base.getPort())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(("GET " + IngestServer.SESSION_PATH + "?topic=t&segment=0&producer=pulsar.repl.a.0"
                    + " HTTP/1.1\r\nHost: x\r\nAuthorization: " + TestNet.signed("a", "b", "GET", "http://x"
                    + IngestServer.SESSION_PATH + "?topic=t&segment=0&producer=pulsar.repl.a.0") + "\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13"
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            DataInputStream in = new DataInputStream(s.getInputStream());
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                head.append((char) in.readUnsignedByte());
            }
            assertThat(head.toString()).startsWith("HTTP/1.1 101 ");
            byte[] payload = send(0, 0).toByteArray();
            ByteArrayOutputStream frame = new ByteArrayOutputStream();
            frame.write(0x80 | 0x40 | 0x2); // FIN, RSV1 ("compressed"), binary
            frame.write(0x80 | 126);
            frame.write(payload.length >> 8);
            frame.write(payload.length & 0xff);
            frame.write(new byte[4]); // a zero mask
            frame.write(payload);
            s.getOutputStream().write(frame.toByteArray());
            assertThat(in.readUnsignedByte() & 0x0f).as("a close frame").isEqualTo(8);
            int length = in.readUnsignedByte() & 0x7f;
            byte[] close = in.readNBytes(length);
            assertThat(((close[0] & 0xff) << 8) | (close[1] & 0xff)).as("protocol error").isEqualTo(1002);
        }
        assertThat(storage.log(0).entries()).isEmpty();
    }

    private static IngestReply reply(byte[] bytes) {
        try {
            return IngestReply.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e);
        }
    }
}
