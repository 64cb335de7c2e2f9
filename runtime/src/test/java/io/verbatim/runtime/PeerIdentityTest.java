package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.Unpooled;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.SigningKey;
import io.verbatim.runtime.broker.IngestServer;
import io.verbatim.runtime.broker.IngestServerTest;
import io.verbatim.runtime.proto.IngestReply;
import io.verbatim.runtime.proto.IngestSend;
import io.verbatim.testkit.ReplicationChecks;
import io.verbatim.testkit.ReplicationRecorder;
import io.verbatim.testkit.Traffic;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;

/**
 * The reported attack: with one token shared by every cluster, anyone holding it could open an ingest
 * session as {@code pulsar.repl.us-east.1} and store one entry at source position 2^62:0, after which
 * every real entry of that producer counted as a duplicate (1,350 messages silently lost). Each cluster
 * is now its own identity, and a session carries only what its cluster may send.
 */
class PeerIdentityTest {
    private static final String TOPIC = "t";
    private static final long FORGED_LEDGER = 1L << 62;

    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void aForgedPositionCannotMakeAPeersRealTrafficCountAsDuplicates() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters:
                  - {name: us-east, token: east-token}
                  - {name: eu-west, token: west-token}
                  - {name: ap-south, token: south-token}
                topics: [{name: t, initialSegments: 2, bucketBudget: 4}]
                replication: {startAt: earliest, retry: {initial: 20ms, max: 300ms}}
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
                """));
        ReplicationRecorder recorder = ReplicationRecorder.attach(runtime.storages(TOPIC), true);
        String ingest = runtime.cluster("eu-west").brokerUrls().get(0) + IngestServer.SESSION_PATH
                + "?topic=t&segment=1&producer=pulsar.repl.us-east.1";

        // Another cluster's credential: refused before the upgrade, the producer is not ap-south's.
        assertThat(IngestServerTest.get(ingest, client("ap-south", "south-token").authorization("eu-west", "GET",
                ingest.substring(ingest.indexOf(IngestServer.SESSION_PATH))))).startsWith("403:")
                .contains("is not one cluster ap-south may use");
        // us-east's own: the session opens, the forged entry is refused, its position implausibly far past any.
        List<IngestReply> replies = forge(ingest, client("us-east", "east-token"));
        assertThat(replies).singleElement().satisfies(r -> {
            assertThat(r.getResult()).isEqualTo(IngestReply.Result.IMPLAUSIBLE);
            assertThat(r.getDetail()).contains("implausibly far past");
        });
        assertThat(runtime.cluster("eu-west").storage(TOPIC).log(1).entries()).isEmpty();

        // The real traffic of that producer afterwards: every message stored everywhere, none a duplicate.
        Traffic traffic = new Traffic(Map.of("us-east", runtime.cluster("us-east").producer(TOPIC, Compression.LZ4)::sendNow),
                100, 0.0, 7);
        for (int round = 0; round < 27; round++) {
            traffic.round(50);
        }
        runtime.awaitQuiet(Duration.ofSeconds(30)).block();
        assertThat(traffic.total()).isEqualTo(1350);
        List<ReplicationChecks.Check> checks = recorder.checks(traffic.produced());
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
        assertThat(runtime.cluster("eu-west").registry().get("verbatim.ingest.entries").tag("result", "duplicate")
                .counter().count()).isZero();
        assertThat(runtime.cluster("eu-west").registry().get("verbatim.ingest.entries").tag("result", "implausible")
                .counter().count()).isEqualTo(1);
    }

    private static NetClient client(String cluster, String secret) {
        return NetClient.of(cluster, SigningKey.fromSecret(secret),
                NetworkLimits.defaults(), Optional.empty(), Schedulers.parallel());
    }

    /** One frame as producer pulsar.repl.us-east.1 at 2^62:0, what the attacker sent, signed by {@code as} for eu-west. */
    private static List<IngestReply> forge(String uri, NetClient as) {
        Entry entry = Entries.batch(MessageMetadata.newBuilder().setProducerName("mallory").setSequenceId(0)
                        .setPublishTime(0).build(), List.of(Message.of("k", "us-east/0".getBytes(StandardCharsets.UTF_8))),
                CompressionType.NONE).restamp(new ReplicationStamp("us-east", SourcePosition.of(FORGED_LEDGER, 0)));
        byte[] frame = IngestSend.newBuilder().setSequence(0).setLedgerId(FORGED_LEDGER).setEntryId(0).setPart(-1)
                .setEntry(ByteString.copyFrom(entry.toByteArray())).build().toByteArray();
        return as.signing(HttpClient.create(), "eu-west").websocket()
                .uri(uri).handle((in, out) -> out.send(Flux.just(Unpooled.wrappedBuffer(frame))).then()
                        .thenMany(in.receive().asByteArray()))
                .map(bytes -> {
                    try {
                        return IngestReply.parseFrom(bytes);
                    } catch (InvalidProtocolBufferException e) {
                        throw new IllegalStateException(e);
                    }
                }).take(Duration.ofSeconds(5)).collectList().block();
    }
}
