package io.verbatim.config;

/**
 * A configuration that cannot be used. The message names the key (a dotted path from the file's root),
 * the value found and what was expected, e.g. {@code replication.retry.jitter: 1.5 is out of range
 * (expected a number within [0, 1])}.
 */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String key;

    public ConfigException(String key, String problem) {
        super((key.isEmpty() ? "(root)" : key) + ": " + problem);
        this.key = key;
    }

    /** The dotted path of the offending key ({@code clusters[1].name}); empty for the whole file. */
    public String key() {
        return key;
    }
}
