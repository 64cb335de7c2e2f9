package io.verbatim.metadatalog.server;

/**
 * A command (or configuration) refused before it was appended: the append carrying it would be larger than
 * the transport's largest message, so it could never reach the other members. It did not take effect.
 */
public final class CommandTooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public CommandTooLargeException(String message) {
        super(message);
    }
}
