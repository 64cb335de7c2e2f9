package io.verbatim.pulsar.broker;

import java.net.URI;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The line the broker's process prints once it is ready: {@code VERBATIM-PULSAR-READY
 * serviceUrl=pulsar://HOST:PORT webUrl=http://HOST:PORT}, then {@code serviceUrlTls=pulsar+ssl://HOST:PORT} and
 * {@code webUrlTls=https://HOST:PORT} when the broker has TLS ports.
 */
record ReadyLine(URI serviceUrl, URI webUrl, @Nullable URI serviceUrlTls, @Nullable URI webUrlTls) {
    static final String PREFIX = "VERBATIM-PULSAR-READY";

    ReadyLine(URI serviceUrl, URI webUrl) {
        this(serviceUrl, webUrl, null, null);
    }

    /** The ready line's URLs, or empty for any other line (a log line, a malformed ready line). */
    static Optional<ReadyLine> parse(String line) {
        String[] words = line.trim().split(" ");
        if (words.length < 3 || words.length > 5 || !words[0].equals(PREFIX)
                || !words[1].startsWith("serviceUrl=") || !words[2].startsWith("webUrl=")) {
            return Optional.empty();
        }
        try {
            URI service = URI.create(words[1].substring("serviceUrl=".length()));
            URI web = URI.create(words[2].substring("webUrl=".length()));
            if (service.getPort() <= 0 || web.getPort() <= 0) {
                return Optional.empty();
            }
            URI serviceTls = null;
            URI webTls = null;
            for (int i = 3; i < words.length; i++) {
                if (words[i].startsWith("serviceUrlTls=") && serviceTls == null) {
                    serviceTls = URI.create(words[i].substring("serviceUrlTls=".length()));
                } else if (words[i].startsWith("webUrlTls=") && webTls == null) {
                    webTls = URI.create(words[i].substring("webUrlTls=".length()));
                } else {
                    return Optional.empty();
                }
            }
            if ((serviceTls != null && serviceTls.getPort() <= 0) || (webTls != null && webTls.getPort() <= 0)) {
                return Optional.empty();
            }
            return Optional.of(new ReadyLine(service, web, serviceTls, webTls));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
