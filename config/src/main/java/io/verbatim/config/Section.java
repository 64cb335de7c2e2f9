package io.verbatim.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One mapping of the YAML tree with its path, read key by key. Every read records the key as known;
 * {@link #done()} then refuses keys nobody read (a typo must not silently fall back to a default).
 * Every error names the full key, the value and what was expected.
 */
final class Section {
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)");
    /** Durations are nanoseconds in a {@code long} downstream: the longest one there is (about 292 years). */
    static final Duration MAX_DURATION = Duration.ofDays(Long.MAX_VALUE / 86_400_000_000_000L);
    /** The maximum of a duration key that names none: a day. */
    static final Duration DEFAULT_MAX_DURATION = Duration.ofDays(1);
    /** A number longer than this is no setting (and would make exact arithmetic slow). */
    private static final int MAX_NUMBER_CHARS = 64;
    /** No text value of a file is longer: names, tokens, addresses, paths (an HTTP header holds 8 KiB). */
    static final int MAX_TEXT_CHARS = 4096;
    /** An error shows this much of a value. */
    private static final int MAX_SHOWN_CHARS = 80;
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(B|KB|MB|GB|KiB|MiB|GiB)?");

    private final String path;
    private final JsonNode node;
    private final Set<String> known = new LinkedHashSet<>();

    Section(String path, @Nullable JsonNode node) {
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

    private @Nullable JsonNode raw(String name) {
        known.add(name);
        JsonNode v = node.get(name);
        return v == null || v.isNull() ? null : v;
    }

    boolean has(String name) {
        known.add(name);
        JsonNode v = node.get(name);
        return v != null && !v.isNull();
    }

    /** The text of {@code name} when it is a scalar rather than a mapping (a shorthand such as {@code storage: pulsar}). */
    Optional<String> scalar(String name) {
        JsonNode v = node.get(name);
        if (v == null || !v.isValueNode() || v.isNull()) {
            return Optional.empty();
        }
        known.add(name);
        return Optional.of(v.asText());
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

    /** A non-blank text of at most {@link #MAX_TEXT_CHARS} printable characters on one line. */
    String string(String name, String fallback) {
        return optionalString(name).orElse(fallback);
    }

    /** {@link #string}, empty when the key is not given. */
    Optional<String> optionalString(String name) {
        JsonNode v = raw(name);
        if (v == null) {
            return Optional.empty();
        }
        if (!v.isValueNode() || v.asText().isBlank()) {
            throw new ConfigException(key(name), shown(v) + " is not a usable text (expected a non-empty string)");
        }
        String text = v.asText();
        if (text.length() > MAX_TEXT_CHARS) {
            throw new ConfigException(key(name), shown(v) + " is too long (expected at most " + MAX_TEXT_CHARS
                    + " characters)");
        }
        if (text.chars().anyMatch(Character::isISOControl)) {
            throw new ConfigException(key(name), shown(v) + " holds a control character or a line break (expected"
                    + " printable text on one line)");
        }
        return Optional.of(text);
    }

    String requiredString(String name, String expected) {
        return optionalString(name).orElseThrow(() -> new ConfigException(key(name), "is missing (expected " + expected
                + ")"));
    }

    int integer(String name, int fallback, int min, int max) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        String text = v.asText().trim();
        if (!(v.isIntegralNumber() || v.isTextual() && text.length() <= MAX_NUMBER_CHARS && text.matches("-?\\d+"))) {
            throw new ConfigException(key(name), shown(v) + " is not a whole number (expected an integer within ["
                    + min + ", " + max + "])");
        }
        BigInteger n = v.isIntegralNumber() ? v.bigIntegerValue() : new BigInteger(text);
        if (n.compareTo(BigInteger.valueOf(min)) < 0 || n.compareTo(BigInteger.valueOf(max)) > 0) {
            throw new ConfigException(key(name), shown(v) + " is out of range (expected an integer within [" + min
                    + ", " + max + "])");
        }
        return n.intValueExact();
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

    /**
     * A duration within {@code [min, max]}: {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 0}, or
     * ISO-8601 ({@code PT30S}). Keys name their own maximum; this form caps at {@link #DEFAULT_MAX_DURATION}.
     */
    Duration duration(String name, Duration fallback, Duration min) {
        return duration(name, fallback, min, DEFAULT_MAX_DURATION);
    }

    /** A duration within {@code [min, max]}, refused naming both bounds otherwise. */
    Duration duration(String name, Duration fallback, Duration min, Duration max) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        String range = "at least " + pretty(min) + " and at most " + pretty(max);
        Duration d = parseDuration(key(name), shown(v), v.asText(), range);
        if (d.compareTo(min) < 0) {
            throw new ConfigException(key(name), shown(v) + " is too short (expected " + range + ")");
        }
        if (d.compareTo(max) > 0) {
            throw new ConfigException(key(name), shown(v) + " is too long (expected " + range + ")");
        }
        return d;
    }

    /**
     * A duration as written ({@code 250ms}, {@code 30s}, {@code 0}, ISO-8601), computed exactly: a value whose
     * nanoseconds do not fit a {@code long} (about 292 years) is refused, never saturated or rounded.
     *
     * @param shown the value as the error shows it
     * @param range what a value too long for a duration is told was expected
     * @throws ConfigException naming {@code key} when it is not a duration or too long for one
     */
    static Duration parseDuration(String key, String shown, String value, String range) {
        String text = value.trim();
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        if (text.length() > MAX_NUMBER_CHARS) {
            throw new ConfigException(key, shown + " is not a duration (expected a number with a unit: 250ms, 30s, "
                    + "5m, 1h, " + range + ")");
        }
        Matcher m = DURATION.matcher(text);
        if (m.matches()) {
            BigDecimal nanos = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(switch (m.group(2)) {
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                case "h" -> 3_600_000_000_000L;
                default -> 86_400_000_000_000L;
            }));
            if (nanos.compareTo(BigDecimal.valueOf(MAX_DURATION.toNanos())) > 0) {
                throw new ConfigException(key, shown + " is too long (expected " + range + ")");
            }
            if (nanos.stripTrailingZeros().scale() > 0) {
                throw new ConfigException(key, shown + " is finer than a nanosecond (expected a duration in whole "
                        + "nanoseconds)");
            }
            return Duration.ofNanos(nanos.longValueExact());
        }
        Duration d;
        try {
            d = Duration.parse(text);
        } catch (DateTimeParseException e) {
            if (e.getCause() instanceof ArithmeticException || e.getCause() instanceof NumberFormatException) {
                throw new ConfigException(key, shown + " is too long (expected " + range + ")");
            }
            throw new ConfigException(key, shown
                    + " is not a duration (expected a number with a unit: 250ms, 30s, 5m, 1h, or 0)");
        }
        if (d.compareTo(MAX_DURATION) > 0 || d.compareTo(MAX_DURATION.negated()) < 0) {
            throw new ConfigException(key, shown + " is too long (expected " + range + ")");
        }
        return d;
    }

    /** Bytes within {@code [min, max]}: {@code 1048576}, {@code 50MB} (10^6), {@code 4MiB} (2^20); exact, never rounded. */
    long bytes(String name, long fallback, long min, long max) {
        JsonNode v = raw(name);
        if (v == null) {
            return fallback;
        }
        String text = v.asText().trim();
        Matcher m = SIZE.matcher(text);
        if (!v.isValueNode() || text.length() > MAX_NUMBER_CHARS || !m.matches()) {
            throw new ConfigException(key(name), shown(v) + " is not a size (expected bytes, optionally with a unit: "
                    + "65536, 512KiB, 50MB, 1GiB, within [" + min + ", " + max + "] bytes)");
        }
        String unit = m.group(2) == null ? "B" : m.group(2);
        BigDecimal b = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(switch (unit) {
            case "KB" -> 1_000L;
            case "MB" -> 1_000_000L;
            case "GB" -> 1_000_000_000L;
            case "KiB" -> 1L << 10;
            case "MiB" -> 1L << 20;
            case "GiB" -> 1L << 30;
            default -> 1L;
        }));
        if (b.stripTrailingZeros().scale() > 0) {
            throw new ConfigException(key(name), shown(v) + " is not a whole number of bytes (expected a size within ["
                    + min + ", " + max + "] bytes)");
        }
        if (b.compareTo(BigDecimal.valueOf(min)) < 0 || b.compareTo(BigDecimal.valueOf(max)) > 0) {
            throw new ConfigException(key(name), shown(v) + " is out of range (expected a size within [" + min + ", "
                    + max + "] bytes)");
        }
        return b.longValueExact();
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

    /** The value as written, quoted when it is a text; a long one shortened, with its length. */
    static String shown(JsonNode v) {
        return v.isTextual() ? quoted(v.asText()) : shortened(v.toString(), "");
    }

    /** {@code text} in quotes, the way errors show a text value. */
    static String quoted(String text) {
        return "'" + shortened(text, "'");
    }

    private static String shortened(String text, String close) {
        return text.length() <= MAX_SHOWN_CHARS ? text + close
                : text.substring(0, MAX_SHOWN_CHARS) + "..." + close + " (" + text.length() + " characters)";
    }

    /** A bound as the notation writes it: {@code 1ms}, {@code 30s}, {@code 1h}, {@code 3650d}. */
    static String pretty(Duration d) {
        long millis = d.toMillis();
        if (millis == 0 || millis % 1_000 != 0) {
            return millis + "ms";
        }
        long seconds = millis / 1_000;
        if (seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3_600 == 0) {
            return seconds / 3_600 + "h";
        }
        return seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
    }
}
