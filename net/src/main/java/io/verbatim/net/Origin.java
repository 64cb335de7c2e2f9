package io.verbatim.net;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Where a URL points: scheme, host and port (the default port made explicit, names in lower case). What a
 * client compares a redirect's or a peer's URL with before it sends anything there.
 */
public record Origin(String scheme, String host, int port) {

    /**
     * The origin of an absolute {@code http} or {@code https} URL.
     *
     * @throws IllegalArgumentException naming the URL when it is not one (or carries user information)
     */
    public static Origin of(String url) {
        return parse(url).orElseThrow(() -> new IllegalArgumentException("'" + url + "' is not an http or https URL "
                + "with a host (and no user information)"));
    }

    /** The origin {@code location} points at, resolved against {@code base}; empty when it does not parse. */
    public static Optional<Origin> resolve(String base, String location) {
        try {
            return parse(new URI(base).resolve(new URI(location)).toString());
        } catch (URISyntaxException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The origin of an absolute {@code http} or {@code https} URL; empty when it is not one. */
    public static Optional<Origin> parse(@Nullable String url) {
        if (url == null) {
            return Optional.empty();
        }
        URI u;
        try {
            u = new URI(url);
        } catch (URISyntaxException e) {
            return Optional.empty();
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || u.getHost() == null || u.getRawUserInfo() != null) {
            return Optional.empty();
        }
        int port = u.getPort() != -1 ? u.getPort() : scheme.equals("https") ? 443 : 80;
        return Optional.of(new Origin(scheme, u.getHost().toLowerCase(Locale.ROOT), port));
    }

    /** Whether {@code url} is at this origin. */
    public boolean holds(String url) {
        return parse(url).map(this::equals).orElse(false);
    }

    @Override
    public String toString() {
        return scheme + "://" + (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
    }
}
