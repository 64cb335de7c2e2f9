package io.verbatim.pulsar;

/** Pulsar could not do what the log asked of it; the message names the topic and what was asked. */
public final class PulsarStorageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PulsarStorageException(String message, Throwable cause) {
        super(message + ": " + cause, cause);
    }
}
