package io.verbatim.cli;

import io.verbatim.net.Origin;
import io.verbatim.net.Tls;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;

/**
 * A call from the command line to a running node ({@code status}, {@code admin}): the credential goes only where
 * the user allowed, and whatever went wrong is said on stderr.
 */
final class NodeCall {
    private NodeCall() {
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
            } catch (IOException | GeneralSecurityException e) {
                spec.commandLine().getErr().println("verbatim " + command + ": --ca " + ca + " cannot be used: "
                        + (e instanceof NoSuchFileException ? "no such file" : e.getMessage()));
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
