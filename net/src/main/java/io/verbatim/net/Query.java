package io.verbatim.net;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** A request's query parameters, decoded one by one so a bad one is named (the first value of each counts). */
public final class Query {
    private Query() {
    }

    /** A parameter that cannot be decoded: a 400 naming it, never a 500. */
    public static final class BadParameter extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        BadParameter(String message) {
            super(message);
        }
    }

    /** @throws BadParameter naming the parameter whose name or value is not well percent-encoded */
    public static Map<String, String> parse(String uri) {
        Map<String, String> out = new LinkedHashMap<>();
        int q = uri.indexOf('?');
        if (q < 0) {
            return out;
        }
        int hash = uri.indexOf('#', q);
        String query = uri.substring(q + 1, hash < 0 ? uri.length() : hash);
        for (String pair : query.split("[&;]")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String rawName = eq < 0 ? pair : pair.substring(0, eq);
            String name = decode(rawName, "the name of parameter '" + shown(rawName) + "'");
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1), "parameter '" + shown(name) + "'");
            out.putIfAbsent(name, value);
        }
        return out;
    }

    private static String decode(String raw, String what) {
        try {
            return QueryStringDecoder.decodeComponent(raw, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new BadParameter(what + " is not well percent-encoded ('" + shown(raw) + "'): " + e.getMessage());
        }
    }

    /** At most 64 characters of what the caller sent, printable. */
    private static String shown(String s) {
        String t = s.length() > 64 ? s.substring(0, 64) + "…" : s;
        return t.replaceAll("[^\\x20-\\x7e]", "?");
    }
}
