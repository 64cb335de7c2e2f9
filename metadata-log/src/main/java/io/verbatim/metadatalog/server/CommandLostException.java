package io.verbatim.metadatalog.server;

/** A leader change dropped a command before it committed: it did not take effect. */
public final class CommandLostException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CommandLostException(String message) {
        super(message);
    }
}
