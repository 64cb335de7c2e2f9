package io.verbatim.net;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * A request's target as a port takes it: origin form only (a path from {@code /}, then the query), and
 * what a redirect's {@code Location} is built from. A target such as {@code @other-host/admin/…},
 * {@code //other-host/…} or an absolute URL would let a {@code Location} made by appending it to a base
 * URL point at another host: such a request is refused (400) before anything else.
 */
public final class RequestTarget {
    /** What RFC 3986 allows in a path and a query besides letters and digits ('#' is never sent). */
    private static final String ALLOWED = "-._~%!$&'()*+,;=:@/?";

    private RequestTarget() {
    }

    /** Why {@code target} is not in origin form, or empty when it is. */
    public static Optional<String> notOriginForm(String target) {
        if (target.isEmpty() || target.charAt(0) != '/') {
            return Optional.of("the request target '" + shown(target) + "' is not a path from '/' (origin form)");
        }
        if (target.startsWith("//")) {
            return Optional.of("the request target '" + shown(target) + "' starts with '//' (an authority, not a path)");
        }
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || ALLOWED.indexOf(c) >= 0)) {
                return Optional.of("the request target '" + shown(target) + "' has a character a target may not have "
                        + "(position " + i + ")");
            }
        }
        return Optional.empty();
    }

    /**
     * Where to redirect a request for {@code target} to the server at {@code baseUrl} (a configured URL,
     * {@code scheme://host:port}): the base URL, the target's path with its dot segments removed and its
     * leading slashes made one, and the target's query as it came.
     *
     * @throws IllegalArgumentException when {@code target} is not in origin form
     */
    public static String location(String baseUrl, String target) {
        notOriginForm(target).ifPresent(why -> {
            throw new IllegalArgumentException(why);
        });
        int q = target.indexOf('?');
        String path = withoutDotSegments(q < 0 ? target : target.substring(0, q));
        String query = q < 0 ? "" : target.substring(q);
        String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        return base + path + query;
    }

    /** RFC 3986's remove_dot_segments of an absolute path, then one leading slash ("/.//host" is "/host"). */
    static String withoutDotSegments(String path) {
        Deque<String> kept = new ArrayDeque<>();
        String[] segments = path.substring(1).split("/", -1);
        boolean directory = false;
        for (String segment : segments) {
            directory = segment.equals(".") || segment.equals("..");
            if (segment.equals("..")) {
                kept.pollLast();
            } else if (!segment.equals(".")) {
                kept.addLast(segment);
            }
        }
        String joined = String.join("/", kept) + (directory ? "/" : "");
        return "/" + joined.replaceFirst("^/+", "");
    }

    private static String shown(String s) {
        String t = s.length() > 128 ? s.substring(0, 128) + "…" : s;
        return t.replaceAll("[^\\x21-\\x7e]", "?");
    }
}
