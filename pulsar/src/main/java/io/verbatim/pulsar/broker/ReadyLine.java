package io.verbatim.pulsar.broker;

import java.net.URI;
import java.util.Optional;

/**
 * The line the broker's process prints once it is ready: {@code VERBATIM-PULSAR-READY
 * serviceUrl=pulsar://HOST:PORT webUrl=http://HOST:PORT}.
 */
record ReadyLine(URI serviceUrl, URI webUrl) {
    static final String PREFIX = "VERBATIM-PULSAR-READY";

    /** The ready line's URLs, or empty for any other line (a log line, a malformed ready line). */
    static Optional<ReadyLine> parse(String line) {
        String[] words = line.trim().split(" ");
        if (words.length != 3 || !words[0].equals(PREFIX)
                || !words[1].startsWith("serviceUrl=") || !words[2].startsWith("webUrl=")) {
            return Optional.empty();
        }
        try {
            URI service = URI.create(words[1].substring("serviceUrl=".length()));
            URI web = URI.create(words[2].substring("webUrl=".length()));
            if (service.getPort() <= 0 || web.getPort() <= 0) {
                return Optional.empty();
            }
            return Optional.of(new ReadyLine(service, web));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
