package io.verbatim.exchange;

/**
 * A refused exchange call: the HTTP status it maps to and a message naming what was wrong. Nothing
 * the call carried was kept.
 */
public final class ExchangeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;

    public ExchangeException(int status, String message) {
        super(message);
        this.status = status;
    }

    public int status() {
        return status;
    }

    /** The peer does not implement the exchange (no such endpoint). */
    public boolean isUnsupported() {
        return status == 404 || status == 501;
    }

    /**
     * Whether calling again soon may succeed: the peer was unreachable, busy, conflicting or failing
     * (409, 429, 5xx, and 503 for a network that lost the call). Other refusals (400, 401, 403, 404,
     * 413, ...) will not change by themselves: they are reported and retried at a slow cadence.
     */
    public boolean isTransient() {
        return status == 409 || status == 429 || status == 408 || status >= 500 && status != 501;
    }

    static ExchangeException badRequest(String message) {
        return new ExchangeException(400, message);
    }
}
