package io.verbatim.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A headless Chromium driven over the Chrome DevTools Protocol, with the JDK's WebSocket client: launch,
 * open a page, evaluate JavaScript in it, take a screenshot, close. Every call waits a bounded time.
 */
final class Chromium implements AutoCloseable {
    /** Where a binary is looked for: {@code VERBATIM_CHROMIUM}, then these names on the {@code PATH}. */
    static final List<String> NAMES = List.of("chromium", "chromium-browser", "google-chrome", "google-chrome-stable");
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
    private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final Path profile;
    private final Deque<String> stderr = new ArrayDeque<>();
    private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private WebSocket socket;

    private Chromium(Process process, Path profile) {
        this.process = process;
        this.profile = profile;
    }

    /** The first Chromium binary found, if any. */
    static Optional<Path> binary() {
        String explicit = System.getenv("VERBATIM_CHROMIUM");
        if (explicit != null && !explicit.isBlank()) {
            return Optional.of(Path.of(explicit)).filter(Files::isExecutable);
        }
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
        return Stream.of(path.split(File.pathSeparator)).filter(d -> !d.isEmpty())
                .flatMap(dir -> NAMES.stream().map(n -> Path.of(dir, n))).filter(Files::isExecutable).findFirst();
    }

    /** Starts {@code binary} headless on a free debugging port and connects to it. */
    static Chromium launch(Path binary, Duration timeout) throws Exception {
        Path profile = Files.createTempDirectory("verbatim-chromium");
        Process p = new ProcessBuilder(binary.toString(), "--headless=new", "--remote-debugging-port=0",
                "--user-data-dir=" + profile, "--no-sandbox", "--no-first-run", "--no-default-browser-check",
                "--disable-gpu", "--disable-extensions", "--disable-background-networking", "--disable-dev-shm-usage",
                "--window-size=1280,1800", "about:blank")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        Chromium c = new Chromium(p, profile);
        try {
            c.connect(c.readDevToolsUrl(timeout));
            return c;
        } catch (Exception e) {
            c.close();
            throw e;
        }
    }

    /** Reads stderr until the DevTools line, then keeps draining it (the last lines kept for messages). */
    private String readDevToolsUrl(Duration timeout) throws Exception {
        CompletableFuture<String> url = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    synchronized (stderr) {
                        stderr.addLast(line);
                        while (stderr.size() > 40) {
                            stderr.removeFirst();
                        }
                    }
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        url.complete(m.group(1));
                    }
                }
            } catch (IOException e) {
                url.completeExceptionally(e);
            }
            url.completeExceptionally(new IllegalStateException("chromium exited before listening: " + lastLines()));
        }, "chromium-stderr");
        reader.setDaemon(true);
        reader.start();
        try {
            return url.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("chromium printed no 'DevTools listening on' line within " + timeout
                    + ": " + lastLines());
        }
    }

    String lastLines() {
        synchronized (stderr) {
            return String.join(" | ", stderr);
        }
    }

    private void connect(String url) throws Exception {
        socket = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(CALL_TIMEOUT)
                .buildAsync(URI.create(url), new Listener()).get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Answers (by id) complete their call; events are not needed here. */
    private final class Listener implements WebSocket.Listener {
        private final StringBuilder message = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            message.append(data);
            if (last) {
                String text = message.toString();
                message.setLength(0);
                try {
                    JsonNode node = JSON.readTree(text);
                    CompletableFuture<JsonNode> call = node.has("id") ? pending.remove(node.get("id").asLong()) : null;
                    if (call != null) {
                        call.complete(node);
                    }
                } catch (IOException e) {
                    pending.values().forEach(f -> f.completeExceptionally(e));
                }
            }
            ws.request(1);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            pending.values().forEach(f -> f.completeExceptionally(error));
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int status, String reason) {
            pending.values().forEach(f -> f.completeExceptionally(new IllegalStateException("DevTools closed the "
                    + "connection (" + status + " " + reason + "): " + lastLines())));
            return null;
        }
    }

    /** Sends one command ({@code sessionId} null for the browser's own) and waits for its result. */
    JsonNode call(String sessionId, String method, Map<String, Object> params) throws Exception {
        long id = ids.incrementAndGet();
        ObjectNode command = JSON.createObjectNode().put("id", id).put("method", method);
        command.set("params", JSON.valueToTree(params));
        if (sessionId != null) {
            command.put("sessionId", sessionId);
        }
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        synchronized (this) { // one text message at a time on a WebSocket
            socket.sendText(JSON.writeValueAsString(command), true).get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
        JsonNode reply;
        try {
            reply = answer.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            pending.remove(id);
        }
        if (reply.has("error")) {
            throw new IllegalStateException(method + " failed: " + reply.get("error"));
        }
        return reply.get("result");
    }

    /** A new tab at {@code url}, attached. */
    Page open(String url) throws Exception {
        String target = call(null, "Target.createTarget", Map.of("url", url)).get("targetId").asText();
        String session = call(null, "Target.attachToTarget", Map.of("targetId", target, "flatten", true))
                .get("sessionId").asText();
        Page page = new Page(target, session);
        call(session, "Emulation.setDeviceMetricsOverride", Map.of("width", 1280, "height", 1800,
                "deviceScaleFactor", 1, "mobile", false));
        return page;
    }

    /** One tab. */
    final class Page {
        private final String target;
        private final String session;

        private Page(String target, String session) {
            this.target = target;
            this.session = session;
        }

        /** The value of {@code expression} (awaited if a promise; JSON-like values only). */
        JsonNode evaluate(String expression) throws Exception {
            JsonNode r = call(session, "Runtime.evaluate", Map.of("expression", expression, "returnByValue", true,
                    "awaitPromise", true));
            if (r.has("exceptionDetails")) {
                throw new IllegalStateException("'" + expression + "' threw " + r.get("exceptionDetails"));
            }
            return r.path("result").path("value");
        }

        void screenshot(Path png) throws Exception {
            String data = call(session, "Page.captureScreenshot", Map.of("format", "png", "captureBeyondViewport",
                    true)).get("data").asText();
            Files.write(png, Base64.getDecoder().decode(data));
        }

        void close() throws Exception {
            call(null, "Target.closeTarget", Map.of("targetId", target));
        }
    }

    /** Asks the browser to close, then ends its processes (forcibly after a few seconds) and drops its profile. */
    @Override
    public void close() {
        if (socket != null) {
            try {
                String bye = "{\"id\":" + ids.incrementAndGet() + ",\"method\":\"Browser.close\",\"params\":{}}";
                synchronized (this) {
                    socket.sendText(bye, true).get(2, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                // ended below anyway
            }
            socket.abort();
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(profile)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind
        }
    }
}
