package io.verbatim.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.ConfigException;
import io.verbatim.config.Durations;
import io.verbatim.config.Samples;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Join;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryFormatException;
import io.verbatim.model.entry.Message;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.net.Origin;
import io.verbatim.net.Tls;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** The {@code verbatim} command line. */
@Command(name = "verbatim", mixinStandardHelpOptions = true, version = "verbatim 0.1.0",
        description = "Geo-replication of Pulsar scalable topics, verbatim.",
        subcommands = {Verbatim.DemoCommand.class, NodeCommand.class, Verbatim.HashCommand.class, Verbatim.InspectCommand.class,
            Verbatim.LayoutCommand.class, Verbatim.StatusCommand.class, Verbatim.AdminCommand.class, KeyCommand.class})
public final class Verbatim implements Runnable {
    /** A check of the demo failed. */
    static final int CHECKS_FAILED = 1;
    /** The input was unusable (configuration, file, argument). */
    static final int BAD_INPUT = 2;

    @Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with its output on {@code out} and {@code err}; returns the exit code. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new Verbatim()).setOut(out).setErr(err)
                .setExecutionExceptionHandler((e, commandLine, parsed) -> {
                    commandLine.getErr().println("verbatim: " + e.getMessage());
                    return BAD_INPUT;
                });
        cli.setExitCodeExceptionMapper(e -> BAD_INPUT);
        return cli.execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "demo", mixinStandardHelpOptions = true,
            description = "Runs clusters on loopback replicating topics in every direction while layouts change "
                    + "(two topics split at the same moment on two clusters, then a split and a rebucket); prints "
                    + "progress, a summary and the checks. Exit code 1 when a check fails, 2 when the input is unusable.")
    static final class DemoCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", paramLabel = "FILE",
                description = "a YAML configuration (default: the bundled config/samples/demo.yaml)")
        @Nullable Path config;

        @Option(names = "--duration", defaultValue = "20s", paramLabel = "TIME",
                description = "how long traffic runs (default ${DEFAULT-VALUE})")
        String duration;

        @Option(names = "--rate", defaultValue = "2000", description = "messages per second per cluster, shared by "
                + "the topics (default ${DEFAULT-VALUE})")
        int rate;

        @Option(names = "--topics", defaultValue = "3", description = "how many topics replicate (default "
                + "${DEFAULT-VALUE}): the configuration's, then more like its first")
        int topics;

        @Option(names = "--batch", defaultValue = "20", description = "messages per produce call (default "
                + "${DEFAULT-VALUE}); a call behind its rate takes what is due, up to 25 batches")
        int batch;

        @Option(names = "--keys", defaultValue = "1000", description = "distinct keys (default ${DEFAULT-VALUE})")
        int keys;

        @Option(names = "--seed", defaultValue = "1", description = "the traffic's random seed (default ${DEFAULT-VALUE})")
        long seed;

        @Option(names = "--rtt", paramLabel = "TIME",
                description = "a simulated round trip on replication traffic between clusters, e.g. 80ms")
        @Nullable String rtt;

        @Option(names = "--outage", paramLabel = "TIME",
                description = "take the last cluster's brokers down for this long at 75%% of the run, e.g. 2s")
        @Nullable String outage;

        @Option(names = "--storage", defaultValue = "memory", paramLabel = "memory|pulsar",
                description = "where segments live: in memory (default), or on an Apache Pulsar standalone broker this "
                        + "command starts in a child process for the run, each cluster in a namespace of its own")
        String storage;

        @Option(names = "--kill-leader", description = "kill the first cluster's controller leader (the metadata log's "
                + "leader replica) at 55%% of the run: another replica takes over")
        boolean killLeader;

        @Option(names = "--json", description = "print one JSON object with the figures and checks as the last line")
        boolean json;

        @Option(names = "--report", paramLabel = "FILE.html", description = "write an HTML report with a rate chart")
        @Nullable Path report;

        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            VerbatimConfig base;
            try {
                base = config == null ? Samples.demo() : VerbatimConfig.load(config);
                if (rtt != null) {
                    base = base.withRtt(durationOf("--rtt", rtt));
                }
            } catch (ConfigException e) {
                spec.commandLine().getErr().println("verbatim demo: configuration " + (config == null ? "(bundled)"
                        : config) + ": " + e.getMessage());
                return BAD_INPUT;
            }
            Duration d = durationOf("--duration", duration);
            if (rate < 1 || batch < 1 || keys < 1 || topics < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--rate, --batch, --keys and --topics must be at least 1");
            }
            if (topics > 1000) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--topics " + topics + " is above 1000");
            }
            boolean onPulsar = switch (storage.toLowerCase(java.util.Locale.ROOT)) {
                case "memory" -> false;
                case "pulsar" -> true;
                default -> throw new CommandLine.ParameterException(spec.commandLine(), "--storage '" + storage
                        + "' is not one of memory, pulsar");
            };
            // With --json, stdout carries only the JSON line: people's output goes to stderr.
            PrintWriter progress = json ? spec.commandLine().getErr() : out;
            Duration down = outage == null ? Duration.ZERO : durationOf("--outage", outage);
            Demo.Result result;
            if (onPulsar) {
                DemoPulsar pulsar = DemoPulsar.start(progress);
                boolean failed = true;
                try {
                    result = new Demo(new Demo.Options(pulsar.configure(base), d, rate, batch, keys, seed, down, topics,
                            killLeader), progress).run();
                    failed = !result.passed();
                } finally {
                    pulsar.close(failed, progress);
                }
            } else {
                result = new Demo(new Demo.Options(base, d, rate, batch, keys, seed, down, topics, killLeader),
                        progress).run();
            }
            PrintWriter summaryTo = progress;
            DemoOutput.summary(result, summaryTo);
            if (report != null) {
                Files.writeString(report, DemoOutput.html(result));
                summaryTo.println("report written to " + report.toAbsolutePath());
            }
            if (json) {
                out.println(DemoOutput.jsonLine(result));
            }
            out.flush();
            return result.passed() ? 0 : CHECKS_FAILED;
        }

        private Duration durationOf(String option, String text) {
            try {
                return Durations.parse(option, text);
            } catch (ConfigException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
        }
    }

    @Command(name = "hash", mixinStandardHelpOptions = true,
            description = "Pulsar's routing hash of a key: Murmur3_32, segment hash (high 16 bits), hashB (low 16 "
                    + "bits) and the entry bucket for each bucket count.")
    static final class HashCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(paramLabel = "KEY", description = "the message key (UTF-8)")
        String key;

        @Option(names = {"-n", "--buckets"}, split = ",", paramLabel = "N",
                description = "bucket counts to place hashB in (default 1,2,4,8,16)")
        @Nullable List<Integer> buckets;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            KeyHash h = KeyHash.of(key);
            out.printf("key          %s%n", key);
            out.printf("murmur3_32   0x%08x (%d)%n", h.raw(), Integer.toUnsignedLong(h.raw()));
            out.printf("segment hash 0x%04x (%d)%n", h.segmentHash(), h.segmentHash());
            out.printf("hashB        0x%04x (%d)%n", h.hashB(), h.hashB());
            for (int n : buckets == null ? List.of(1, 2, 4, 8, 16) : buckets) {
                Buckets b;
                try {
                    b = Buckets.of(n);
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--buckets " + n + ": " + e.getMessage());
                }
                int i = b.bucketOf(h.hashB());
                out.printf("N=%-5d      bucket %d %s%n", n, i, b.range(i).toHexString());
            }
            return 0;
        }
    }

    @Command(name = "inspect", mixinStandardHelpOptions = true,
            description = "Reads one entry in Pulsar's format (CRC32C framing, MessageMetadata, payload) and prints "
                    + "its metadata, stamp, codec, replication stamp and messages.")
    static final class InspectCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(paramLabel = "ENTRY-FILE", description = "a file holding one entry's bytes")
        Path file;

        @Option(names = "--max-messages", defaultValue = "20", description = "messages to list (default ${DEFAULT-VALUE})")
        int maxMessages;

        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            if (!Files.isRegularFile(file)) {
                spec.commandLine().getErr().println("verbatim inspect: " + file + " is not a readable file");
                return BAD_INPUT;
            }
            byte[] bytes = Files.readAllBytes(file);
            Entry entry;
            List<Message> messages;
            try {
                entry = Entry.parse(ByteBuffer.wrap(bytes));
                messages = Entries.messages(entry);
            } catch (EntryFormatException e) {
                spec.commandLine().getErr().println("verbatim inspect: " + file + " is not a usable entry: "
                        + e.getMessage());
                return BAD_INPUT;
            }
            MessageMetadata md = entry.metadata();
            out.printf("entry        %s (%,d bytes, checksum 0x%08x verified)%n", file, bytes.length, entry.checksum());
            out.printf("producer     %s, sequence %d, published %d%n", md.getProducerName(), md.getSequenceId(),
                    md.getPublishTime());
            out.printf("codec        %s, payload %,d bytes compressed, %,d uncompressed%n", md.getCompression(),
                    entry.payload().remaining(), md.getUncompressedSize());
            out.printf("messages     %d%s%n", messages.size(), entry.isBatch() ? " (batch)" : " (single)");
            out.printf("stamp        %s%n", entry.facts().stamp().map(stamp -> String.format(
                    "entry_hash_min 0x%04x, entry_hash_max 0x%04x", stamp.hashMin(), stamp.hashMax()))
                    .orElse("none (legacy entry: always re-batched)"));
            out.printf("replicated   %s%n", entry.isReplicated() ? "from " + md.getReplicatedFrom() + " at "
                    + entry.sourcePosition().map(Object::toString).orElse("?") : "no (produced here)");
            for (int i = 0; i < Math.min(maxMessages, messages.size()); i++) {
                Message m = messages.get(i);
                byte[] p = m.payloadBytes();
                String preview = new String(p, 0, Math.min(p.length, 32), StandardCharsets.UTF_8)
                        .replaceAll("\\p{Cntrl}", ".");
                out.printf("  #%-4d key %-20s hashB 0x%04x  %,d bytes  %s%n", i, m.key().orElse("(none)"),
                        m.hashB(), p.length, preview);
            }
            if (messages.size() > maxMessages) {
                out.printf("  ... %d more%n", messages.size() - maxMessages);
            }
            return 0;
        }
    }

    @Command(name = "layout", mixinStandardHelpOptions = true, description = "Layout algebra.",
            subcommands = {JoinCommand.class})
    static final class LayoutCommand implements Runnable {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            spec.commandLine().usage(spec.commandLine().getOut());
        }
    }

    @Command(name = "join", mixinStandardHelpOptions = true,
            description = "The join of two layouts (union of boundaries, larger bucket count per range) and the "
                    + "mutations each side applies to reach it. A layout is written as its cells in ring order, "
                    + "hex ranges with bucket counts: 0000-7fff/4,8000-ffff/2")
    static final class JoinCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "A", description = "the first layout")
        String a;

        @Parameters(index = "1", paramLabel = "B", description = "the second layout")
        String b;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            Layout first = layout("A", a);
            Layout second = layout("B", b);
            Shape join = Join.of(Shape.of(first), Shape.of(second));
            out.println("join  " + notation(join));
            plan(out, "A", first, join);
            plan(out, "B", second, join);
            return 0;
        }

        private static void plan(PrintWriter out, String name, Layout layout, Shape target) {
            List<Mutation> plan = Join.toReach(layout, target);
            out.printf("%s reaches it in %d step(s)%s%n", name, plan.size(), plan.isEmpty() ? " (it already refines it)" : ":");
            Layout current = layout;
            for (Mutation m : plan) {
                current = current.apply(m, current.epoch(), 0).layoutOrThrow();
                out.printf("  %-34s -> %s%n", describe(m), notation(Shape.of(current)));
            }
        }

        private static String describe(Mutation m) {
            if (m instanceof Mutation.Split s) {
                return "split segment " + s.segmentId() + " at its midpoint";
            }
            if (m instanceof Mutation.SplitAt s) {
                return String.format("split segment %d at 0x%04x", s.segmentId(), s.boundary());
            }
            if (m instanceof Mutation.Rebucket r) {
                return "rebucket segment " + r.segmentId() + " to N=" + r.bucketCount();
            }
            return m.toString();
        }

        private Layout layout(String name, String text) {
            List<Segment> segments = new ArrayList<>();
            String[] cells = text.trim().split("\\s*,\\s*");
            try {
                for (int i = 0; i < cells.length; i++) {
                    String[] parts = cells[i].split("/");
                    if (parts.length != 2) {
                        throw new IllegalArgumentException("cell '" + cells[i] + "' is not start-end/N");
                    }
                    HashRange range = HashRange.fromHexString(parts[0]);
                    int n = Integer.parseInt(parts[1].replaceFirst("^[Nn]", ""));
                    segments.add(Segment.active(i, range, List.of(), 0, 0, Buckets.of(n)));
                }
                return Layout.of(0, segments.size(), segments);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "layout " + name + " '" + text
                        + "' is unusable: " + e.getMessage() + " (expected cells tiling 0000-ffff, e.g. "
                        + "0000-7fff/4,8000-ffff/2)");
            }
        }

        static String notation(Shape shape) {
            StringBuilder b = new StringBuilder();
            for (Shape.Cell c : shape.cells()) {
                b.append(b.length() == 0 ? "" : ",").append(c.range().toHexString()).append('/').append(c.buckets().count());
            }
            return b.toString();
        }
    }

    @Command(name = "admin", mixinStandardHelpOptions = true,
            description = "Operations on a running node (the admin token from --token or "
                    + "VERBATIM_ADMIN_TOKEN; --ca FILE for a node serving TLS; a redirect to the controller leader is "
                    + "followed only to the URL's own origin, or with --config FILE to the admin URLs of the URL's "
                    + "cluster and its controller replicas; anywhere else it is not followed and the token not sent; an "
                    + "answer other than 2xx exits 2): split URL TOPIC SEGMENT | rebucket URL TOPIC SEGMENT N (a lower N is a "
                    + "cold mark) | merge URL TOPIC FIRST SECOND (a cold mark: merged once every cluster agrees) | "
                    + "coldmarks URL TOPIC (the marks by source) | unmark URL TOPIC BOUNDARY|RANGE (withdraws an "
                    + "operator's mark, e.g. 8000 or c000-ffff) | dedup URL TOPIC (the deduplication marks of the "
                    + "embedded storage) | dedup-reset URL TOPIC SEGMENT PRODUCER (removes one) | delegations URL (who "
                    + "feeds each listener of the "
                    + "metadata log) | delegate URL LISTENER=FOLLOWER... (the whole new assignment; 'none' clears it).")
    static final class AdminCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "OPERATION",
                description = "split, rebucket, merge, coldmarks, unmark, dedup, dedup-reset, delegations or delegate")
        String operation;

        @Parameters(index = "1", paramLabel = "URL", description = "the node's admin URL")
        String url;

        @Parameters(index = "2..*", paramLabel = "ARG",
                description = "the topic, then segment id(s) and the bucket count of a rebucket; or LISTENER=FOLLOWER")
        List<String> args = new ArrayList<>();

        @Option(names = "--token", description = "the admin token (default: $VERBATIM_ADMIN_TOKEN)")
        @Nullable String token;

        @Option(names = "--ca", paramLabel = "FILE", description = "the CA certificates (PEM) an https node is checked by")
        @Nullable Path ca;

        @Option(names = "--config", paramLabel = "FILE", description = "the nodes' configuration: a redirect is followed "
                + "to the admin URL of the cluster URL belongs to and to its controller replicas' (the token goes there "
                + "too)")
        @Nullable Path config;

        @Override
        public Integer call() throws Exception {
            Optional<Redirects> redirects = Redirects.of(spec, "admin", url, config);
            if (redirects.isEmpty()) {
                return BAD_INPUT;
            }
            this.redirects = redirects.get();
            if (operation.equals("delegations") || operation.equals("delegate")) {
                return delegation();
            }
            if (args.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), operation + " needs a TOPIC after the URL");
            }
            String topic = args.get(0);
            List<String> rest = args.subList(1, args.size());
            String query = switch (operation) {
                case "split" -> rest.size() == 1 ? "segment=" + rest.get(0) : null;
                case "rebucket" -> rest.size() == 2 ? "segment=" + rest.get(0) + "&bucketCount=" + rest.get(1) : null;
                case "merge" -> rest.size() == 2 ? "first=" + rest.get(0) + "&second=" + rest.get(1) : null;
                case "coldmarks", "dedup" -> rest.isEmpty() ? "" : null;
                case "dedup-reset" -> rest.size() == 2 ? "segment=" + rest.get(0) + "&producer="
                        + java.net.URLEncoder.encode(rest.get(1), StandardCharsets.UTF_8) : null;
                case "unmark" -> rest.size() == 1 ? (rest.get(0).contains("-") ? "range=" : "boundary=") + rest.get(0)
                        : null;
                default -> throw new CommandLine.ParameterException(spec.commandLine(), "operation '" + operation
                        + "' is not one of split, rebucket, merge, coldmarks, unmark, dedup, dedup-reset, delegations, "
                        + "delegate");
            };
            if (query == null) {
                throw new CommandLine.ParameterException(spec.commandLine(), operation + " takes "
                        + switch (operation) {
                            case "split" -> "SEGMENT";
                            case "merge" -> "FIRST SECOND";
                            case "coldmarks", "dedup" -> "nothing";
                            case "dedup-reset" -> "SEGMENT PRODUCER";
                            case "unmark" -> "BOUNDARY or RANGE";
                            default -> "SEGMENT N";
                        } + " after the topic, not " + rest);
            }
            Optional<String> bearer = bearer();
            if (bearer.isEmpty()) {
                return BAD_INPUT;
            }
            String path = switch (operation) {
                case "unmark" -> "coldmarks";
                case "dedup-reset" -> "dedup";
                default -> operation;
            };
            String target = url.replaceAll("/+$", "") + "/admin/v2/scalable/" + path + "?topic="
                    + java.net.URLEncoder.encode(topic, StandardCharsets.UTF_8) + (query.isEmpty() ? "" : "&" + query);
            HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(target))
                    .header("Authorization", "Bearer " + bearer.get());
            call = switch (operation) {
                case "coldmarks", "dedup" -> call.GET();
                case "unmark", "dedup-reset" -> call.DELETE();
                default -> call.POST(HttpRequest.BodyPublishers.noBody());
            };
            return answer(call);
        }

        /** The metadata log's listener delegation: read it, or put the admin's whole new assignment. */
        private int delegation() throws Exception {
            Optional<String> bearer = bearer();
            if (bearer.isEmpty()) {
                return BAD_INPUT;
            }
            HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "")
                    + "/admin/v2/metadata/delegations")).header("Authorization", "Bearer " + bearer.get());
            if (operation.equals("delegations")) {
                if (!args.isEmpty()) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "delegations takes nothing after the "
                            + "URL, not " + args);
                }
                return answer(call.GET());
            }
            Map<String, String> assignment = new LinkedHashMap<>();
            boolean none = args.size() == 1 && args.get(0).equals("none");
            for (String a : none ? List.<String>of() : args) {
                String[] kv = a.split("=", -1);
                if (kv.length != 2 || kv[0].isBlank() || kv[1].isBlank()) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "'" + a + "' is not LISTENER=FOLLOWER "
                            + "(e.g. b0=c2; 'none' clears the assignment)");
                }
                if (assignment.put(kv[0], kv[1]) != null) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "listener " + kv[0] + " is given "
                            + "twice (expected each listener once: the later would silently win)");
                }
            }
            if (assignment.isEmpty() && !none) {
                throw new CommandLine.ParameterException(spec.commandLine(), "delegate takes LISTENER=FOLLOWER... or "
                        + "'none' after the URL");
            }
            String body = new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(assignment);
            return answer(call.header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)));
        }

        private Optional<String> bearer() {
            String bearer = token != null ? token : System.getenv("VERBATIM_ADMIN_TOKEN");
            if (bearer == null || bearer.isBlank()) {
                spec.commandLine().getErr().println("verbatim admin: no token: pass --token or set VERBATIM_ADMIN_TOKEN");
                return Optional.empty();
            }
            return Optional.of(bearer);
        }

        private Redirects redirects = Redirects.NONE;

        private int answer(HttpRequest.Builder call) {
            Optional<HttpResponse<String>> response = fetch(spec, "admin", call, ca, redirects);
            if (response.isEmpty()) {
                return BAD_INPUT;
            }
            spec.commandLine().getOut().println(response.get().body().trim());
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "A running node's status: its replicators (each failing or stalled one named), per topic "
                    + "its layout, per remote the converged and diverged ranges, the last state's age and the "
                    + "replication backlog.")
    static final class StatusCommand implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(paramLabel = "URL", description = "the node's admin URL, e.g. http://127.0.0.1:8080")
        String url;

        @Option(names = "--json", description = "print the status JSON as received")
        boolean json;

        @Option(names = "--token", description = "a token, for a node whose status is not open (security.openStatus: false)")
        @Nullable String token;

        @Option(names = "--ca", paramLabel = "FILE", description = "the CA certificates (PEM) an https node is checked by")
        @Nullable Path ca;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            String base = url.replaceAll("/+$", "");
            HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(base + "/admin/v2/scalable/status")).GET();
            if (token != null) {
                call.header("Authorization", "Bearer " + token);
            }
            Optional<HttpResponse<String>> answer = fetch(spec, "status", call, ca, Redirects.NONE);
            if (answer.isEmpty()) {
                return BAD_INPUT;
            }
            HttpResponse<String> response = answer.get();
            if (json) {
                out.println(response.body());
                return 0;
            }
            JsonNode status = new ObjectMapper().readTree(response.body());
            out.printf("cluster %s%s%n", status.path("cluster").asText(),
                    status.path("deferringOwnChanges").asBoolean() ? " (deferring its own changes)" : "");
            printReplicators(out, status.path("replicators"));
            status.path("topics").fields().forEachRemaining(t -> {
                JsonNode topic = t.getValue();
                out.printf("topic %s  epoch %d  convergence lag %d ms%n  layout %s%n", t.getKey(),
                        topic.path("epoch").asLong(), topic.path("convergenceLagMillis").asLong(),
                        join(topic.path("layout")));
                topic.path("remotes").fields().forEachRemaining(r -> {
                    JsonNode remote = r.getValue();
                    long backlog = 0;
                    for (JsonNode v : remote.path("replicationBacklog")) {
                        backlog += v.asLong();
                    }
                    out.printf(Locale.ROOT, "  → %-10s diverged [%s]  converged [%s]  last state %s  backlog %d%n",
                            r.getKey(), join(remote.path("divergedRanges")), join(remote.path("convergedRanges")),
                            remote.has("lastStateAgeMillis") ? remote.path("lastStateAgeMillis").asLong() + " ms ago"
                                    : remote.path("state").asText(), backlog);
                });
            });
            return 0;
        }

        /** The replicators' summary, then each failing one and each stalled one (backlog, not moving). */
        private static void printReplicators(PrintWriter out, JsonNode replicators) {
            if (replicators.isMissingNode()) {
                return; // a controller replica's status: no replicators there
            }
            out.printf(Locale.ROOT, "replicators %d  restarts %d  failing %d  stalled %d%n",
                    replicators.path("total").asLong(), replicators.path("restarts").asLong(),
                    replicators.path("failing").size(), replicators.path("stalled").size());
            for (JsonNode f : replicators.path("failing")) {
                out.printf(Locale.ROOT, "  failing %s  %s, %d failure(s) in a row: %s%n", f.path("id").asText(),
                        f.path("state").asText(), f.path("consecutiveFailures").asLong(), f.path("lastError").asText());
            }
            for (JsonNode r : replicators.path("stalled")) {
                out.printf(Locale.ROOT, "  stalled %s  %s for %.1f s, backlog %d%s%n", r.path("id").asText(),
                        r.path("state").asText(), r.path("stalledForMillis").asLong() / 1000.0,
                        r.path("backlog").asLong(), r.path("lastError").isTextual() ? ", last error: "
                                + r.path("lastError").asText() : "");
            }
        }

        private static String join(JsonNode array) {
            List<String> items = new ArrayList<>();
            array.forEach(n -> items.add(n.asText()));
            return String.join(" ", items);
        }
    }

    /**
     * Sends a request to a node, following a redirect only where {@code redirects} allows (its credential goes
     * nowhere else); on no answer, a redirect not followed or an answer other than 2xx, says so on stderr
     * (naming the command, the status and the node's own message) and returns empty.
     */
    static Optional<HttpResponse<String>> fetch(CommandLine.Model.CommandSpec spec, String command,
            HttpRequest.Builder request, @Nullable Path ca, Redirects redirects) {
        HttpRequest built = request.timeout(Duration.ofSeconds(10)).build();
        HttpClient.Builder client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
                .followRedirects(HttpClient.Redirect.NEVER);
        if (ca != null) {
            try {
                client.sslContext(Tls.trusting(ca)); // the JDK client checks the host name against the certificate
            } catch (IOException | java.security.GeneralSecurityException e) {
                spec.commandLine().getErr().println("verbatim " + command + ": --ca " + ca + " cannot be used: "
                        + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.getMessage()));
                return Optional.empty();
            }
        }
        Optional<Origin> origin = Origin.parse(built.uri().toString());
        if (origin.isEmpty()) {
            spec.commandLine().getErr().println("verbatim " + command + ": '" + built.uri() + "' is not an http or https "
                    + "URL with a host (and no user information)");
            return Optional.empty();
        }
        Origin asked = origin.get();
        HttpResponse<String> response;
        try {
            HttpClient http = client.build();
            response = http.send(built, HttpResponse.BodyHandlers.ofString());
            // a replica that does not lead, or the brokers' process, redirects to the controller leader: the same
            // call there, when it is this URL's origin or one the user allowed (its cluster's, from --config)
            for (int hops = 0; hops < 3 && (response.statusCode() == 307 || response.statusCode() == 308); hops++) {
                Optional<String> location = response.headers().firstValue("location");
                if (location.isEmpty()) {
                    break;
                }
                URI next;
                try {
                    next = built.uri().resolve(location.get());
                } catch (IllegalArgumentException e) {
                    next = null;
                }
                Optional<Origin> to = next == null ? Optional.empty() : Origin.parse(next.toString());
                if (to.isEmpty() || !to.get().equals(asked) && !redirects.allows(to.get())) {
                    spec.commandLine().getErr().println("verbatim " + command + ": " + built.uri() + " redirected to '"
                            + location.get() + "', which is neither " + asked + " nor "
                            + (redirects.allowed().isEmpty() ? "an address allowed (--config FILE allows those of its "
                                    + "cluster)" : "one of " + redirects.allowed()) + ": not followed, nothing sent there");
                    return Optional.empty();
                }
                built = HttpRequest.newBuilder(built, (name, value) -> true).uri(next).build();
                response = http.send(built, HttpResponse.BodyHandlers.ofString());
            }
        } catch (IOException e) {
            URI node = built.uri();
            spec.commandLine().getErr().println("verbatim " + command + ": cannot reach " + node.getScheme() + "://"
                    + node.getHost() + ":" + node.getPort() + ": "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (response.statusCode() / 100 != 2) {
            spec.commandLine().getErr().println("verbatim " + command + ": " + built.uri() + " answered "
                    + response.statusCode() + ": " + response.body().trim());
            return Optional.empty();
        }
        return Optional.of(response);
    }
}
