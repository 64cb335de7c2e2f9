package io.verbatim.pulsar.broker;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Copies the broker process's output (stdout and stderr merged) line by line to its log file, and completes {@link
 * #ready()} with the first READY line, or exceptionally when the output ends before one.
 */
final class OutputPump implements Runnable {
    private final InputStream output;
    private final Path logFile;
    private final CompletableFuture<ReadyLine> ready = new CompletableFuture<>();

    OutputPump(InputStream output, Path logFile) {
        this.output = output;
        this.logFile = logFile;
    }

    CompletableFuture<ReadyLine> ready() {
        return ready;
    }

    @Override
    public void run() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(output, StandardCharsets.UTF_8));
             BufferedWriter log = Files.newBufferedWriter(logFile, StandardCharsets.UTF_8,
                     StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            String line;
            while ((line = in.readLine()) != null) {
                log.write(line);
                log.newLine();
                log.flush();
                if (!ready.isDone()) {
                    ReadyLine.parse(line).ifPresent(ready::complete);
                }
            }
        } catch (IOException e) {
            ready.completeExceptionally(e);
        }
        ready.completeExceptionally(new IllegalStateException("the broker's output ended before its ready line"));
    }

    /** The last {@code n} lines of a log file, for an error message; a note where it cannot be read. */
    static String tail(Path logFile, int n) {
        try {
            List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        } catch (IOException e) {
            return "(" + logFile + " could not be read: " + e + ")";
        }
    }
}
