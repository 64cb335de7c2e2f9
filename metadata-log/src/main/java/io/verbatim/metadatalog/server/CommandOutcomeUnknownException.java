package io.verbatim.metadatalog.server;

/**
 * A command's outcome cannot be known on this member (a snapshot from the leader overtook it): it may or may
 * not have taken effect. Never retried blindly; read the state, then decide.
 */
public final class CommandOutcomeUnknownException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CommandOutcomeUnknownException(String message) {
        super(message);
    }
}
