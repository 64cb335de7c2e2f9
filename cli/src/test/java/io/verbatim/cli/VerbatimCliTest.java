package io.verbatim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.net.TestCertificates;
import io.verbatim.runtime.EmbeddedRuntime;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** Every command of the command line but the demo (the examples' {@code DemoCommandTest}), as a user runs it. */
class VerbatimCliTest {
    @TempDir
    Path dir;

    /** Exit code, standard output, standard error. */
    record Run(int code, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Verbatim.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString());
    }

    /** Picocli formats descriptions with {@code String.format}: a bare {@code %} is warned about on System.err. */
    @Test
    void everyCommandsHelpPrintsWithoutPicocliWarnings() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream warnings = new ByteArrayOutputStream();
        System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
        try {
            for (String command : List.of("node", "hash", "inspect", "layout", "status", "admin", "key")) {
                Run r = run(command, "--help");
                assertThat(r.code()).as(command).isZero();
                assertThat(r.out()).as(command).startsWith("Usage: verbatim " + command);
            }
        } finally {
            System.setErr(stderr);
        }
        assertThat(warnings.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    /** The demo judges its run by the tests' checks, which this jar goes without: it says where the demo runs. */
    @Test
    void theDemoIsListedAndCalledSaysWhereItRuns() {
        Run help = run("--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("  demo     Runs clusters on loopback").contains("  node     Runs one cluster");
        for (String[] args : List.of(new String[] {"demo"}, new String[] {"demo", "--help"},
                new String[] {"demo", "--storage", "pulsar", "--seed", "7"})) {
            Run r = run(args);
            assertThat(r.code()).as(String.join(" ", args)).isEqualTo(Verbatim.BAD_INPUT);
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).isEqualTo("verbatim demo: the demo runs from the examples' jar, not this one: "
                    + "./verbatim demo, or java -jar examples/target/verbatim-demo.jar" + System.lineSeparator());
        }
    }

    @Test
    void hashPrintsPulsarsHashSplitIntoItsTwoRingsAndTheBuckets() {
        KeyHash h = KeyHash.of("customer-42");
        Run r = run("hash", "customer-42", "--buckets", "4,16");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains(String.format("murmur3_32   0x%08x", h.raw()))
                .contains(String.format("segment hash 0x%04x", h.segmentHash()))
                .contains(String.format("hashB        0x%04x", h.hashB()))
                .contains("N=4     ").contains("bucket " + h.hashB() * 4 / 65536)
                .contains("N=16    ").contains("bucket " + h.hashB() * 16 / 65536);
        Run bad = run("hash", "k", "--buckets", "0");
        assertThat(bad.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(bad.err()).contains("--buckets 0");
    }

    @Test
    void inspectShowsMetadataStampCodecAndMessagesAndNamesWhatIsWrongWithABadFile() throws Exception {
        MessageMetadata md = MessageMetadata.newBuilder().setProducerName("orders-producer").setSequenceId(7)
                .setPublishTime(1_700_000_000_000L).build();
        Entry entry = Entries.batch(md, List.of(Message.of("a", "first".getBytes()), Message.of("a", "second".getBytes())),
                CompressionType.ZSTD).restamp(new ReplicationStamp("us-east", SourcePosition.of(3, 9)));
        Path file = dir.resolve("entry.bin");
        Files.write(file, entry.toByteArray());
        Run r = run("inspect", file.toString());
        assertThat(r.code()).as(r.err()).isZero();
        int hashB = KeyHash.of("a").hashB();
        assertThat(r.out()).contains("producer     orders-producer, sequence 7").contains("codec        ZSTD")
                .contains("messages     2 (batch)")
                .contains(String.format("entry_hash_min 0x%04x, entry_hash_max 0x%04x", hashB, hashB))
                .contains("replicated   from us-east at 3:9").contains("key a").contains("second");

        byte[] corrupt = entry.toByteArray();
        corrupt[corrupt.length - 2] ^= 1;
        Files.write(file, corrupt);
        Run bad = run("inspect", file.toString());
        assertThat(bad.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(bad.err()).contains("is not a usable entry").containsIgnoringCase("checksum");
        assertThat(run("inspect", dir.resolve("none").toString()).err()).contains("is not a readable file");
    }

    @Test
    void layoutJoinPrintsTheJoinAndEachSidesPlan() {
        Run r = run("layout", "join", "0000-7fff/4,8000-ffff/2", "0000-3fff/1,4000-ffff/1");
        assertThat(r.code()).as(r.err()).isZero();
        // A's N=4 over 0000-7fff counts 2 on each half, as splitting it gives: the join compares like ranges.
        assertThat(r.out()).contains("join  0000-3fff/2,4000-7fff/2,8000-ffff/2")
                .contains("A reaches it in 1 step(s):").contains("split segment 0 at its midpoint")
                .contains("B reaches it in").contains("split segment 1 at 0x8000")
                .contains("-> 0000-3fff/2,4000-7fff/2,8000-ffff/2");
        Run bad = run("layout", "join", "0000-7fff/4", "0000-ffff/1");
        assertThat(bad.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(bad.err()).contains("layout A '0000-7fff/4' is unusable");
    }

    @Test
    void statusAndAdminReachANodeServingTlsWithTheCa() throws Exception {
        TestCertificates ca = new TestCertificates(dir, "cli-ca");
        Path[] east = ca.issue("east");
        Path[] west = ca.issue("west");
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters:
                  - {name: east, token: east-token, tls: {certificateChain: '%s', privateKey: '%s'}}
                  - {name: west, token: west-token, tls: {certificateChain: '%s', privateKey: '%s'}}
                topics: [{name: t, initialSegments: 2, bucketBudget: 4}]
                exchange: {antiEntropyInterval: 500ms}
                security:
                  adminToken: s
                  tls: {enabled: true, trustedCertificates: '%s', clientAuth: optional}
                """.formatted(east[0], east[1], west[0], west[1], ca.caFile())))) {
            String url = runtime.cluster("east").adminUrl();
            assertThat(url).startsWith("https://127.0.0.1:");
            Run status = run("status", url, "--ca", ca.caFile().toString());
            assertThat(status.code()).as(status.err()).isZero();
            assertThat(status.out()).contains("cluster east");
            Run marks = run("admin", "coldmarks", url, "t", "--token", "s", "--ca", ca.caFile().toString());
            assertThat(marks.code()).as(marks.err()).isZero();
            Run untrusted = run("status", url);
            assertThat(untrusted.code()).isEqualTo(Verbatim.BAD_INPUT);
            assertThat(untrusted.err()).contains("cannot reach " + url);
        }
    }

    /** Issue 23: a replicator that rewinds and reconnects without getting anything through is named, not hidden. */
    @Test
    void statusNamesAReplicatorStalledWithBacklogThatIsNotFailing() {
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: east, token: east-token}, {name: west, token: west-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 1}]
                replication: {sendTimeout: 200ms, stallAfter: 300ms, retry: {initial: 20ms, max: 100ms}}
                exchange: {antiEntropyInterval: 500ms}
                """))) {
            runtime.cluster("west").stopIngest(); // west's brokers are gone; its controller still answers
            runtime.cluster("east").producer("t", Compression.NONE).sendNow(List.of(
                    Message.of("k", "v".getBytes(StandardCharsets.UTF_8))));
            Run r = Flux.interval(Duration.ofMillis(100))
                    .map(tick -> run("status", runtime.cluster("east").adminUrl()))
                    .filter(run -> run.out().contains("stalled 1")).blockFirst(Duration.ofSeconds(20));
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("replicators 1  restarts 0  failing 0  stalled 1")
                    .containsPattern("  stalled east:t/0000-ffff-0-->west  [A-Z_]+ for \\d+\\.\\d s, backlog 1");
            runtime.cluster("west").restartIngest();
            Run after = Flux.interval(Duration.ofMillis(100))
                    .map(tick -> run("status", runtime.cluster("east").adminUrl()))
                    .filter(run -> run.out().contains("stalled 0")).blockFirst(Duration.ofSeconds(20));
            assertThat(after.out()).contains("stalled 0").doesNotContain("\n  stalled ");
        }
    }

    @Test
    void statusReadsARunningNode() {
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: east, token: east-token}, {name: west, token: west-token}]
                topics: [{name: t, initialSegments: 2, bucketBudget: 4}]
                exchange: {antiEntropyInterval: 500ms}
                security: {adminToken: s}
                """))) {
            runtime.awaitQuiet(Duration.ofSeconds(20)).block();
            Run r = run("status", runtime.cluster("east").adminUrl());
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("cluster east").contains("storage memory  not durable (a stop loses what it holds)")
                    .contains("topic t  epoch 0")
                    .contains("layout 0000-7fff/N2 8000-ffff/N2")
                    .containsPattern("→ west +diverged \\[\\]  converged \\[0000-7fff/N2 8000-ffff/N2\\]");
            assertThat(run("status", runtime.cluster("east").adminUrl(), "--json").out()).contains("\"cluster\" : \"east\"");

            // Manual operations: a split on east reaches west; a merge of the halves is a cold mark.
            String east = runtime.cluster("east").adminUrl();
            Run split = run("admin", "split", east, "t", "0", "--token", "s");
            assertThat(split.code()).as(split.err()).isZero();
            assertThat(split.out()).contains("\"outcome\":\"applied\"").contains("\"created\":[2,3]");
            runtime.awaitQuiet(Duration.ofSeconds(20)).block();
            assertThat(runtime.cluster("west").layout("t").activeSegments()).hasSize(3);
            // The halves' ids now (the join may have rebucketed them to the N west held over their range).
            var active = runtime.cluster("east").layout("t").activeSegments();
            String low = Long.toString(active.get(0).id());
            String high = Long.toString(active.get(1).id());
            assertThat(run("admin", "merge", east, "t", low, high, "--token", "s").out())
                    .contains("\"outcome\":\"marked-cold\"").contains("\"boundary\":\"4000\"");
            assertThat(run("admin", "coldmarks", east, "t", "--token", "s").out()).contains("\"manual\":[\"4000\"]");
            assertThat(run("admin", "unmark", east, "t", "4000", "--token", "s").out()).contains("\"outcome\":\"withdrawn\"");
            assertThat(run("admin", "unmark", east, "t", "4000", "--token", "s").err()).contains("404");
            Run lower = run("admin", "rebucket", east, "t", Long.toString(active.get(2).id()), "1", "--token", "s");
            assertThat(lower.out()).as(lower.err()).contains("\"outcome\":\"marked-cold\"").contains("8000-ffff");
            assertThat(run("admin", "unmark", east, "t", "8000-ffff", "--token", "s").out()).contains("withdrawn");
            assertThat(run("admin", "rebucket", east, "t", Long.toString(active.get(2).id()), "3", "--token", "s").err())
                    .contains("400").contains("bucketCount 3 is not a power of two");
            Run notSiblings = run("admin", "merge", east, "t", high, Long.toString(active.get(2).id()), "--token", "s");
            assertThat(notSiblings.code()).isEqualTo(Verbatim.BAD_INPUT);
            assertThat(notSiblings.err()).contains("409").contains("merges siblings only");
            assertThat(run("admin", "rebucket", east, "t", "0", "8", "--token", "s").err()).contains("409")
                    .contains("SEGMENT_SEALED");
            assertThat(run("admin", "split", east, "t", "1", "--token", "wrong").err()).contains("403");
            assertThat(run("admin", "split", east, "t", "1", "--token", "east-token").err()).as("a cluster's secret")
                    .contains("403").contains("the bearer token is not valid here");
            assertThat(run("admin", "coldmarks", east, "t", "--token", "s", "--ca", "/nonexistent/ca.pem").err())
                    .contains("--ca /nonexistent/ca.pem cannot be used: no such file");
            assertThat(run("admin", "split", east, "nope", "1", "--token", "s").err()).contains("404")
                    .contains("no topic 'nope'");
            assertThat(run("admin", "split", east, "t", "x", "--token", "s").err()).contains("400")
                    .contains("segment 'x' is not a segment id");
            assertThat(run("admin", "grow", east, "t", "1").err()).contains("'grow' is not one of");
        }
        Run down = run("status", "http://127.0.0.1:1");
        assertThat(down.code()).isEqualTo(Verbatim.BAD_INPUT);
        assertThat(down.err()).contains("cannot reach http://127.0.0.1:1");
    }

    @Test
    void adminShowsAndResetsTheDeduplicationMarksOfTheEmbeddedStorage() {
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: east, token: east-token}, {name: west, token: west-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
                replication: {startAt: earliest}
                exchange: {antiEntropyInterval: 500ms}
                security: {adminToken: s}
                """))) {
            runtime.awaitQuiet(Duration.ofSeconds(20)).block();
            runtime.cluster("east").producer("t", Compression.LZ4)
                    .send(List.of(Message.of("k", "east/0".getBytes()))).block();
            runtime.awaitQuiet(Duration.ofSeconds(20)).block();
            String west = runtime.cluster("west").adminUrl();
            Run marks = run("admin", "dedup", west, "t", "--token", "s");
            assertThat(marks.code()).as(marks.err()).isZero();
            assertThat(marks.out()).contains("\"segment\":0").contains("\"producer\":\"pulsar.repl.east.0\"")
                    .containsPattern("\"position\":\"\\d+:0\"");
            Run reset = run("admin", "dedup-reset", west, "t", "0", "pulsar.repl.east.0", "--token", "s");
            assertThat(reset.out()).as(reset.err()).contains("\"reset\":true");
            assertThat(run("admin", "dedup", west, "t", "--token", "s").out()).contains("\"marks\":[]");
            assertThat(run("admin", "dedup-reset", west, "t", "0", "pulsar.repl.east.0", "--token", "s").err())
                    .contains("404").contains("has no deduplication mark");
            assertThat(run("admin", "dedup-reset", west, "t", "x", "p", "--token", "s").err()).contains("400")
                    .contains("segment 'x' is not a segment id");
            assertThat(run("admin", "dedup-reset", west, "t", "0", "--token", "s").err())
                    .contains("dedup-reset takes SEGMENT PRODUCER after the topic");
            assertThat(run("admin", "dedup", west, "t", "--token", "east-token").err()).contains("403");
        }
    }

    @Test
    void adminAssignsTheMetadataLogsListenersAndShowsWhoFeedsWhom() {
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: east, token: east-token, brokers: 2}, {name: west, token: west-token}]
                security: {adminToken: s}
                metadataLog: {enabled: true}
                """))) {
            String east = runtime.cluster("east").adminUrl();
            String leader = Flux.interval(Duration.ofMillis(20)).map(t -> runtime.cluster("east").metadataLog().stream()
                            .filter(m -> m.role() == MemberRole.LEADER).findFirst())
                    .filter(Optional::isPresent).map(Optional::get)
                    .blockFirst(Duration.ofSeconds(10)).memberId();
            String follower = List.of("c1", "c2", "c3").stream().filter(v -> !v.equals(leader)).findFirst().orElseThrow();
            Run delegate = Flux.interval(Duration.ofMillis(50), Schedulers.boundedElastic()).map(t -> run("admin", "delegate", east, "b1=" + follower,
                    "--token", "s")).filter(r -> !r.err().contains("503")).blockFirst(Duration.ofSeconds(20));
            assertThat(delegate.code()).as(delegate.err()).isZero();
            assertThat(delegate.out()).contains("\"assignment\":{\"b1\":\"" + follower + "\"}");
            Run shown = Flux.interval(Duration.ofMillis(50), Schedulers.boundedElastic()).map(t -> run("admin", "delegations", east, "--token", "s"))
                    .filter(r -> r.out().contains("\"source\":\"" + follower + "\",\"delegated\":true"))
                    .blockFirst(Duration.ofSeconds(10));
            assertThat(shown.out()).contains("\"listener\":\"b0\",\"assignedTo\":\"\",\"source\":\"" + leader + "\"");
            assertThat(run("admin", "delegate", east, "b1=" + follower, "--token", "east-token").err()).contains("403");
            assertThat(run("admin", "delegate", east, "b1", "--token", "s").err()).contains("'b1' is not LISTENER=FOLLOWER");
            assertThat(run("admin", "delegate", east, "b7=c1", "--token", "s").err()).contains("400")
                    .contains("b7 is not a listener");
            Run cleared = run("admin", "delegate", east, "none", "--token", "s");
            assertThat(cleared.out()).as(cleared.err()).contains("\"assignment\":{}");
        }
    }

    /** Issue 25: the broker members, and a member added at run time, which a cluster of one process refuses. */
    @Test
    void adminListsTheBrokerMembersAndAClusterOfOneProcessRefusesToAddOne() {
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: east, token: east-token}, {name: west, token: west-token}]
                security: {adminToken: s}
                """))) {
            String east = runtime.cluster("east").adminUrl();
            Run listed = run("admin", "members", east, "--token", "s");
            assertThat(listed.code()).as(listed.err()).isZero();
            assertThat(listed.out().trim()).isEqualTo("[]");
            String key = io.verbatim.net.SigningKey.fromSecret("b4-secret").verifying().form();
            Run added = run("admin", "add-member", east, "broker-4", "127.0.0.1:7104", "http://127.0.0.1:8104",
                    "http://127.0.0.1:9104", key, "--token", "s");
            assertThat(added.code()).isNotZero();
            assertThat(added.err()).contains("409").contains("embedded storage").contains("one broker process");
            assertThat(run("admin", "add-member", east, "broker-4", "--token", "s").err())
                    .contains("add-member takes ID RAFT_ADDRESS ADMIN_URL INGEST_URL VERIFYING_KEY");
            assertThat(run("admin", "members", east, "--token", "east-token").err()).contains("403");
        }
    }

    /** The node would take the last of the two; refused before anything is sent. */
    @Test
    void adminDelegateRefusesAListenerGivenTwice() {
        Run r = run("admin", "delegate", "http://127.0.0.1:9", "b1=c1", "b1=c2", "--token", "s");
        assertThat(r.code()).isNotZero();
        assertThat(r.err()).contains("listener b1 is given twice").doesNotContain("Connection refused");
    }

    /** A broker member's status: its lease and what it acts on, each member's share, each segment being moved. */
    @Test
    void statusShowsWhoOwnsTheSegmentsOfAClusterOfManyBrokerProcesses() {
        String body = """
                {"cluster":"east","topics":{},"replicators":{"total":2,"restarts":0,"failing":[],"stalled":[]},
                 "storage":{"type":"pulsar","durable":true,"failure":""},
                 "ownership":{"member":"broker-1","leaseRemainingMs":8300,"acting":["t#0","t#2"],"epoch":41,
                   "members":[{"id":"broker-1","state":"ACTIVE","segments":2,"bytesPerSecond":-1},
                              {"id":"broker-2","state":"DRAINING","segments":1,"bytesPerSecond":-1}],
                   "moving":[{"segment":"t#1","phase":"RELEASING","owner":"broker-2","to":"broker-1","epoch":40}]}}
                """;
        DisposableServer node = HttpServer.create().host("127.0.0.1").port(0)
                .handle((req, res) -> res.status(200).sendString(Mono.just(body))).bindNow();
        try {
            Run r = run("status", "http://127.0.0.1:" + node.port());
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("ownership  epoch 41  broker-1: lease 8.3 s, acting on t#0 t#2")
                    .contains("broker-2     DRAINING 1 segment(s)")
                    .contains("t#1 RELEASING broker-2 -> broker-1");
        } finally {
            node.disposeNow();
        }
    }

    /**
     * Issue 23 item 6: {@code verbatim admin} forwarded the admin token to wherever a node redirected it and
     * printed the answer as success. It follows a redirect to the URL's own origin, or with {@code --config} to
     * the admin ports of the URL's cluster and its controller replicas; anywhere else nothing is sent and it
     * exits 2, as it does on any final answer other than 2xx.
     */
    @Test
    void adminFollowsARedirectOnlyWithinItsOriginOrTheConfiguredClusterAndFailsOnAnythingBut2xx() throws Exception {
        List<String> heard = new CopyOnWriteArrayList<>();
        int[] status = {200};
        DisposableServer elsewhere = HttpServer.create().host("127.0.0.1").port(0)
                .handle((req, res) -> {
                    heard.add(req.method() + " " + req.uri() + " " + req.requestHeaders().get("Authorization"));
                    return res.status(status[0]).sendString(Mono.just("{\"outcome\":\"applied\"}"));
                }).bindNow();
        String target = "http://127.0.0.1:" + elsewhere.port();
        DisposableServer node = HttpServer.create().host("127.0.0.1").port(0)
                .handle((req, res) -> req.uri().startsWith("/here")
                        ? res.status(200).sendString(Mono.just("{\"outcome\":\"here\"}"))
                        : res.status(307).header("Location", req.uri().contains("segment=1") ? "/here" + req.uri()
                                : target + req.uri()).send())
                .bindNow();
        String url = "http://127.0.0.1:" + node.port();
        try {
            Run refused = run("admin", "split", url, "t", "0", "--token", "admin-secret");
            assertThat(refused.code()).isEqualTo(Verbatim.BAD_INPUT);
            assertThat(refused.err()).contains("redirected to '" + target + "/admin/v2/scalable/split?topic=t&segment=0'")
                    .contains("not followed, nothing sent there");
            assertThat(refused.out()).isEmpty();
            assertThat(heard).as("the token went nowhere").isEmpty();

            Run sameOrigin = run("admin", "split", url, "t", "1", "--token", "admin-secret");
            assertThat(sameOrigin.code()).as(sameOrigin.err()).isZero();
            assertThat(sameOrigin.out()).contains("\"outcome\":\"here\"");

            Path config = dir.resolve("nodes.yaml");
            Files.writeString(config, """
                    clusters:
                      - name: east
                        token: env:EAST_SECRET_NOT_SET_HERE
                        adminPort: %d
                        brokerPorts: [%d]
                        raftPort: %d
                        controllers:
                          - {id: c1, adminPort: %d, raftPort: %d}
                          - {id: c2, adminPort: %d, raftPort: %d}
                          - {id: c3, adminPort: %d, raftPort: %d}
                      - {name: west, token: west-secret, adminPort: %d, brokerPorts: [%d]}
                    """.formatted(node.port(), free(), free(), elsewhere.port(), free(), free(), free(), free(), free(),
                    free(), free()));
            Run followed = run("admin", "split", url, "t", "0", "--token", "admin-secret", "--config", config.toString());
            assertThat(followed.code()).as(followed.err()).isZero();
            assertThat(heard).singleElement().isEqualTo("POST /admin/v2/scalable/split?topic=t&segment=0 Bearer admin-secret");

            // the URL may be any broker member's admin port: its redirect to a controller replica is followed
            Path members = dir.resolve("members.yaml");
            Files.writeString(members, """
                    storage: pulsar
                    clusters:
                      - name: east
                        token: env:EAST_SECRET_NOT_SET_HERE
                        pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080"}
                        controllers:
                          - {id: c1, adminPort: %d, raftPort: %d}
                          - {id: c2, adminPort: %d, raftPort: %d}
                          - {id: c3, adminPort: %d, raftPort: %d}
                        brokerMembers:
                          - {id: broker-1, adminPort: %d, brokerPorts: [%d], raftPort: %d}
                          - {id: broker-2, adminPort: %d, brokerPorts: [%d], raftPort: %d}
                      - name: west
                        token: west-secret
                        adminPort: %d
                        brokerPorts: [%d]
                        pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080"}
                    """.formatted(elsewhere.port(), free(), free(), free(), free(), free(), free(), free(), free(),
                    node.port(), free(), free(), free(), free()));
            Run viaMember = run("admin", "split", url, "t", "0", "--token", "admin-secret", "--config", members.toString());
            assertThat(viaMember.code()).as(viaMember.err()).isZero();
            assertThat(heard).hasSize(2);

            status[0] = 500;
            Run failed = run("admin", "split", url, "t", "0", "--token", "admin-secret", "--config", config.toString());
            assertThat(failed.code()).as("a final answer that is not 2xx").isEqualTo(Verbatim.BAD_INPUT);
            assertThat(failed.err()).contains("answered 500");
            assertThat(failed.out()).isEmpty();

            Run stranger = run("admin", "split", "http://127.0.0.1:1", "t", "0", "--token", "s", "--config",
                    config.toString());
            assertThat(stranger.code()).isEqualTo(Verbatim.BAD_INPUT);
            assertThat(stranger.err()).contains("names no cluster at http://127.0.0.1:1");

            Run userInfo = run("admin", "split", "http://user@127.0.0.1:" + node.port(), "t", "0", "--token", "s");
            assertThat(userInfo.code()).isEqualTo(Verbatim.BAD_INPUT);
            assertThat(userInfo.err()).contains("is not an http or https URL with a host (and no user information)");
        } finally {
            node.disposeNow();
            elsewhere.disposeNow();
        }
    }

    private static int free() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void keyPublicPrintsTheVerifyingKeyOfASecretWithoutEchoingIt() {
        InputStream stdin = System.in;
        try {
            System.setIn(new ByteArrayInputStream("east-secret\n".getBytes(StandardCharsets.UTF_8)));
            Run r = run("key", "public");
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out().strip()).isEqualTo("ed25519:WzqJUMEgXo9Ekxj5pNgSROH5J3zJjt3B7KhpUUyy2ag=");
            assertThat(r.out() + r.err()).doesNotContain("east-secret");
            System.setIn(new ByteArrayInputStream("east-secret \n".getBytes(StandardCharsets.UTF_8)));
            Run spaced = run("key", "public");
            assertThat(spaced.code()).isEqualTo(Verbatim.BAD_INPUT);
            assertThat(spaced.err()).contains("white space").doesNotContain("east-secret");
            System.setIn(new ByteArrayInputStream(new byte[0]));
            assertThat(run("key", "public").err()).contains("no secret in standard input");
            assertThat(run("key", "public", "--env", "VERBATIM_SURELY_UNSET_VARIABLE").err())
                    .contains("no secret in environment variable VERBATIM_SURELY_UNSET_VARIABLE");
        } finally {
            System.setIn(stdin);
        }
    }
}
