package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.cli.Verbatim;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.runtime.storage.StateFormat;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import reactor.core.scheduler.Schedulers;

/**
 * {@code verbatim node} processes (separate JVMs) a test starts from one YAML, by name: {@code us-east} runs a
 * whole cluster, {@code east/c1} one member of a cluster ({@code --member c1}). Each logs to its own file, keeps
 * its data under {@code data/<name>}, and is called over HTTP on the admin port the test gave it, with the
 * admin token.
 */
final class NodeProcesses implements AutoCloseable {
    /** Every port handed out in this JVM: a port freed again may be handed out twice by the system. */
    private static final Set<Integer> TAKEN = ConcurrentHashMap.newKeySet();

    private final Path dir;
    private final String token;
    private final Duration wait;
    private final HttpClient http;
    private final Map<String, Process> processes = new LinkedHashMap<>();
    private final Map<String, Integer> adminPorts = new LinkedHashMap<>();
    private Path config;

    /** @param followRedirects whether calls follow a 307 (to a controller leader) */
    NodeProcesses(Path dir, String token, Duration wait, boolean followRedirects) {
        this.dir = dir;
        this.token = token;
        this.wait = wait;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
                .followRedirects(followRedirects ? HttpClient.Redirect.NORMAL : HttpClient.Redirect.NEVER).build();
    }

    static int freePort() throws IOException {
        while (true) {
            try (ServerSocket s = new ServerSocket(0)) {
                if (TAKEN.add(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            }
        }
    }

    /** Writes the YAML every process starts from. */
    Path config(String yaml) throws IOException {
        config = dir.resolve("nodes.yaml");
        Files.writeString(config, yaml);
        return config;
    }

    /** Where {@code name}'s admin port is. */
    void adminPort(String name, int port) {
        adminPorts.put(name, port);
    }

    /** {@code name}'s admin URL. */
    String adminUrl(String name) {
        return "http://127.0.0.1:" + adminPorts.get(name);
    }

    void start(String name) throws IOException {
        start(name, config);
    }

    /**
     * The nodes' log levels by logger, as {@code -Dverbatim.nodes.logLevels=io.verbatim.pipeline=debug,…} gives them
     * (to see what a failing seed's nodes did): slf4j-simple's properties for the node's command line.
     */
    static List<String> logLevels(String spec) {
        List<String> out = new ArrayList<>();
        for (String pair : spec.split(",")) {
            if (pair.isBlank()) {
                continue;
            }
            String[] kv = pair.strip().split("=", 2);
            if (kv.length != 2 || kv[0].isBlank() || !Set.of("trace", "debug", "info", "warn", "error").contains(kv[1])) {
                throw new IllegalArgumentException("verbatim.nodes.logLevels: '" + pair + "' is not logger=level "
                        + "(trace, debug, info, warn or error)");
            }
            out.add("-Dorg.slf4j.simpleLogger.log." + kv[0] + "=" + kv[1]);
        }
        return out;
    }

    /** Starts {@code name} from a YAML of its own (the fault tests give each process its own view of the network). */
    void start(String name, Path ownConfig) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String[] parts = name.split("/");
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC"));
        command.addAll(logLevels(System.getProperty("verbatim.nodes.logLevels", "")));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Verbatim.class.getName(), "node",
                "--config", ownConfig.toString(), "--cluster", parts[0],
                "--data-dir", dir.resolve("data").resolve(name.replace('/', '-')).toString(), "--drain-timeout", "5s"));
        if (parts.length > 1) {
            command.addAll(List.of("--member", parts[1]));
        }
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile(name).toFile()));
        processes.put(name, pb.start());
    }

    Process process(String name) {
        return processes.get(name);
    }

    /** Sends {@code signal} ({@code STOP}, {@code CONT}, ...) to {@code name}'s process with {@code kill}. */
    void signal(String name, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(processes.get(name).pid()))
                .redirectErrorStream(true).start();
        String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + signal + " " + name + " (pid " + processes.get(name).pid() + "): " + out);
        }
    }

    /** Every process started, by name, in start order. */
    Map<String, Process> processes() {
        return processes;
    }

    private Path logFile(String name) {
        return dir.resolve(name.replace('/', '-') + ".log");
    }

    String log(String name) {
        try {
            return Files.readString(logFile(name));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /**
     * Every {@code ERROR} line of {@code log} with what follows it up to the next logged line (its stack
     * trace), at most 80 lines each.
     */
    static List<String> errors(String log) {
        List<String> out = new ArrayList<>();
        List<String> lines = log.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(" ERROR ")) {
                StringBuilder error = new StringBuilder(lines.get(i));
                for (int j = i + 1; j < lines.size() && j <= i + 80 && !LOGGED.matcher(lines.get(j)).lookingAt(); j++) {
                    error.append('\n').append(lines.get(j));
                }
                out.add(error.toString());
            }
        }
        return out;
    }

    /** How a line a node logs starts (slf4j-simple's {@code HH:mm:ss.SSS [thread] LEVEL}), or a line it prints. */
    private static final Pattern LOGGED = Pattern.compile(
            "\\d\\d:\\d\\d:\\d\\d\\.\\d{3} \\[|[a-z][\\w-]*(/\\w+)?: ");

    /** Copies every process's log to {@code to} (created if missing), replacing what an earlier run left. */
    void keepLogs(Path to) throws IOException {
        Files.createDirectories(to);
        for (String name : processes.keySet()) {
            if (Files.exists(logFile(name))) {
                Files.copy(logFile(name), to.resolve(logFile(name).getFileName()),
                        StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** Waits until {@code line} appears {@code times} times in {@code name}'s log, or its process ends. */
    void awaitLine(String name, String line, int times) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (System.nanoTime() < deadline) {
            String log = log(name);
            if (log.split(Pattern.quote(line), -1).length - 1 >= times) {
                return;
            }
            if (!processes.get(name).isAlive()) {
                throw new AssertionError(name + " exited with " + processes.get(name).exitValue() + ":\n" + log);
            }
            Thread.sleep(50);
        }
        throw new AssertionError(name + " did not print '" + line + "' within " + wait + ":\n" + log(name));
    }

    /** {@code calls} produce calls to {@code name} of {@code perCall} messages {@code cluster/n} each. */
    void produce(String name, String cluster, String topic, AtomicInteger counter, int calls, int perCall, int keys) {
        for (int i = 0; i < calls; i++) {
            StringBuilder body = new StringBuilder("{\"messages\":[");
            int first = counter.get();
            for (int m = 0; m < perCall; m++) {
                int n = first + m;
                String payload = Base64.getEncoder().encodeToString((cluster + "/" + n).getBytes(StandardCharsets.UTF_8));
                body.append(m == 0 ? "" : ",").append("{\"key\":\"k").append(n * 7919 % keys).append("\",\"payload\":\"")
                        .append(payload).append("\"}");
            }
            body.append("]}");
            HttpResponse<String> r = call(name, "POST", "/admin/v2/scalable/produce?topic=" + enc(topic), body.toString());
            assertThat(r.statusCode()).as(name + " produce: " + r.body()).isEqualTo(200);
            counter.addAndGet(perCall);
        }
    }

    /** What {@code name} stores of {@code topic}, read through its image endpoint. */
    MemorySegments image(String name, String cluster, String topic) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = http.send(request(name, "GET", "/admin/v2/scalable/image?topic=" + enc(topic), null)
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        ClusterImage image = StateFormat.read(new ByteArrayInputStream(r.body()), cluster).get(topic);
        return MemorySegments.restore(cluster, topic, image, Schedulers.immediate());
    }

    HttpResponse<String> call(String name, String method, String path, String body) {
        try {
            return http.send(request(name, method, path, body).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError(name + " " + method + " " + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** One call with its own timeout; an answer that does not come in time, or a connection that fails, throws. */
    HttpResponse<String> call(String name, String method, String path, String body, Duration timeout)
            throws IOException, InterruptedException {
        return http.send(request(name, method, path, body).timeout(timeout).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@link #image} with a timeout, for a node that may be paused. */
    MemorySegments image(String name, String cluster, String topic, Duration timeout) throws IOException,
            InterruptedException {
        HttpResponse<byte[]> r = http.send(request(name, "GET", "/admin/v2/scalable/image?topic=" + enc(topic), null)
                .timeout(timeout).build(), HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
            throw new IOException(name + " image: " + r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8));
        }
        ClusterImage image = StateFormat.read(new ByteArrayInputStream(r.body()), cluster).get(topic);
        return MemorySegments.restore(cluster, topic, image, Schedulers.immediate());
    }

    private HttpRequest.Builder request(String name, String method, String path, String body) {
        return HttpRequest.newBuilder(URI.create(adminUrl(name) + path))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        processes.values().forEach(Process::destroyForcibly);
    }
}
