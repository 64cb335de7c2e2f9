package io.verbatim.metadatalog.server;

/** A read barrier had no confirmation from a leader in time (no leader, or one that changed meanwhile). */
public final class ReadTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ReadTimeoutException(String message) {
        super(message, null, false, false);
    }
}
