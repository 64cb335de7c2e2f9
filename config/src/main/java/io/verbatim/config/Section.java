package io.verbatim.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One mapping of the YAML tree with its path, read key by key. Every read records the key as known;
 * {@link #done()} then refuses keys nobody read (a typo must not silently fall back to a default).
 * Every error names the full key, the value and what was expected.
 */
final class Section {
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)");
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(B|KB|MB|GB|KiB|MiB|GiB)?");

    private final String path;
    private final JsonNode node;
    private final Set<String> known = new LinkedHashSet<>();

    Section(String path, JsonNode node) {
        this.path = path;
        this.node = node == null ? MissingNode.getInstance() : node;
        if (!this.node.isMissingNode() && !this.node.isNull() && !this.node.isObject()) {
            throw new ConfigException(path, shown(this.node) + " is not a mapping (expected keys and values)");
        }
    }

    String path() {
        return path;
    }

    String key(String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    private JsonNode raw(String name) {
        known.add(name);
        JsonNode v = node.get(name);
        return v == null || v.isNull() ? null : v;
    }

    boolean has(String name) {
        known.add(name);
        JsonNode v = node.get(name);
        return v != null && !v.isNull();
    }

    Section section(String name) {
        return new Section(key(name), raw(name));
    }

    List<Section> sections(String name) {
        JsonNode v = raw(name);
        List<Section> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (!v.isArray()) {
            throw new ConfigException(key(name), shown(v) + " is not a list (expected a list of mappings)");
        }
        for (int i = 0; i < v.size(); i++) {
            out.add(new Section(key(name) + "[" + i + "]", v.get(i)));
        }
        return out;
    }

    String string(String name, String fallback) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        if (!v.isValueNode() || v.asText().isBlank()) {
            throw new ConfigException(key(name), shown(v) + " is not a usable text (expected a non-empty string)");
        }
        return v.asText();
    }

    String requiredString(String name, String expected) {
        String v = string(name, null);
        if (v == null) {
            throw new ConfigException(key(name), "is missing (expected " + expected + ")");
        }
        return v;
    }

    int integer(String name, int fallback, int min, int max) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        if (!v.canConvertToLong() || !(v.isIntegralNumber() || v.isTextual() && v.asText().matches("-?\\d+"))) {
            throw new ConfigException(key(name), shown(v) + " is not a whole number (expected an integer within ["
                    + min + ", " + max + "])");
        }
        long n = v.asLong();
        if (n < min || n > max) {
            throw new ConfigException(key(name), n + " is out of range (expected an integer within [" + min + ", "
                    + max + "])");
        }
        return (int) n;
    }

    /** A list of whole numbers, each within {@code [min, max]}; empty when the key is absent. */
    List<Integer> integers(String name, int min, int max) {
        JsonNode v = raw(name);
        List<Integer> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (!v.isArray()) {
            throw new ConfigException(key(name), shown(v) + " is not a list (expected a list of integers within ["
                    + min + ", " + max + "])");
        }
        for (int i = 0; i < v.size(); i++) {
            JsonNode n = v.get(i);
            String k = key(name) + "[" + i + "]";
            if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() < min || n.asInt() > max) {
                throw new ConfigException(k, shown(n) + " is not an integer within [" + min + ", " + max + "]");
            }
            out.add(n.asInt());
        }
        return out;
    }

    double number(String name, double fallback, double min, double max) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        double d;
        if (v.isNumber()) {
            d = v.asDouble();
        } else {
            try {
                d = Double.parseDouble(v.asText().trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(key(name), shown(v) + " is not a number (expected a number within [" + min
                        + ", " + max + "])");
            }
        }
        if (!(d >= min && d <= max)) {
            throw new ConfigException(key(name), shown(v) + " is out of range (expected a number within [" + min
                    + ", " + max + "])");
        }
        return d;
    }

    boolean bool(String name, boolean fallback) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        throw new ConfigException(key(name), shown(v) + " is not a boolean (expected true or false)");
    }

    /** {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 0}, or ISO-8601 ({@code PT30S}). */
    Duration duration(String name, Duration fallback, Duration min) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        Duration d = parseDuration(v);
        if (d == null) {
            throw new ConfigException(key(name), shown(v)
                    + " is not a duration (expected a number with a unit: 250ms, 30s, 5m, 1h, or 0)");
        }
        if (d.compareTo(min) < 0) {
            throw new ConfigException(key(name), shown(v) + " is too short (expected at least " + pretty(min) + ")");
        }
        return d;
    }

    private static Duration parseDuration(JsonNode v) {
        return v.isNumber() && v.asLong() == 0 ? Duration.ZERO : parseDuration(v.asText());
    }

    /** A duration as written in the YAML ({@code 250ms}, {@code 30s}, {@code 0}, ISO-8601), or {@code null}. */
    static Duration parseDuration(String value) {
        String text = value.trim();
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = DURATION.matcher(text);
        if (m.matches()) {
            double amount = Double.parseDouble(m.group(1));
            double millis = switch (m.group(2)) {
                case "ms" -> amount;
                case "s" -> amount * 1_000;
                case "m" -> amount * 60_000;
                case "h" -> amount * 3_600_000;
                default -> amount * 86_400_000;
            };
            return Duration.ofNanos(Math.round(millis * 1_000_000));
        }
        try {
            return Duration.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** Bytes: {@code 1048576}, {@code 50MB} (10^6), {@code 4MiB} (2^20). */
    long bytes(String name, long fallback, long min, long max) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        Matcher m = SIZE.matcher(v.asText().trim());
        if (!m.matches()) {
            throw new ConfigException(key(name), shown(v)
                    + " is not a size (expected bytes, optionally with a unit: 65536, 512KiB, 50MB, 1GiB)");
        }
        double amount = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "B" : m.group(2);
        long scale = switch (unit) {
            case "KB" -> 1_000L;
            case "MB" -> 1_000_000L;
            case "GB" -> 1_000_000_000L;
            case "KiB" -> 1L << 10;
            case "MiB" -> 1L << 20;
            case "GiB" -> 1L << 30;
            default -> 1L;
        };
        double b = amount * scale;
        if (b < min || b > max) {
            throw new ConfigException(key(name), shown(v) + " is out of range (expected a size within [" + min + ", "
                    + max + "] bytes)");
        }
        return Math.round(b);
    }

    <E extends Enum<E>> E choice(String name, E fallback, Class<E> type) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        String text = v.asText().trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E e : type.getEnumConstants()) {
            if (e.name().equals(text)) {
                return e;
            }
        }
        List<String> names = new ArrayList<>();
        for (E e : type.getEnumConstants()) {
            names.add(e.name().toLowerCase(Locale.ROOT));
        }
        throw new ConfigException(key(name), shown(v) + " is not one of " + names);
    }

    /** The mapping under {@code name} read entry by entry (keys are data, not config keys). */
    <T> List<T> entries(String name, Function<Entry, T> reader) {
        JsonNode v = raw(name);
        List<T> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (!v.isObject()) {
            throw new ConfigException(key(name), shown(v) + " is not a mapping (expected keys and values)");
        }
        for (Iterator<String> it = v.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            out.add(reader.apply(new Entry(key(name) + "." + k, k, v.get(k))));
        }
        return out;
    }

    /** One entry of a data mapping. */
    record Entry(String key, String name, JsonNode value) {
    }

    /** Refuses every key of this mapping that no read asked for, naming the ones that exist. */
    void done() {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!known.contains(k)) {
                throw new ConfigException(key(k), "is not a known key (expected one of " + new TreeSet<>(known) + ")");
            }
        }
    }

    static String shown(JsonNode v) {
        if (v.isTextual()) {
            return "'" + v.asText() + "'";
        }
        return v.toString();
    }

    static String pretty(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }
}
