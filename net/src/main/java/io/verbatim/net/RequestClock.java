package io.verbatim.net;

/**
 * When a connection has waited too long for a request, and which limit says so. Pure: the guard of a
 * connection tells it what happened and when ({@code nowNanos}); {@link #due} answers.
 *
 * <ul>
 * <li>A request must arrive whole (headers and body) within {@code network.requestTimeout} of its first byte.
 * <li>A connection that has not authenticated must send a request whole within
 * {@code network.firstRequestTimeout} of opening, or of the end of its previous answer (an anonymous status
 * call does not authenticate): whichever of the two ends first.
 * <li>Nothing is due while the node answers (a slow answer is not the client's fault), nor on an
 * authenticated connection between requests (its idle timeout is Reactor Netty's), nor on a WebSocket.
 * </ul>
 */
final class RequestClock {
    /** Which limit a connection ran out of. */
    enum Limit {
        FIRST_REQUEST, REQUEST
    }

    /** When the connection's wait runs out, if it can. */
    sealed interface Due {
        record Never() implements Due {
        }

        record At(long nanos, Limit limit) implements Due {
        }
    }

    private static final long NONE = Long.MIN_VALUE;
    private final long requestTimeoutNanos;
    private final long firstRequestTimeoutNanos;
    /** When it opened or its last answer ended: what the first-request deadline counts from. */
    private long waitingSince;
    /** The first byte of the request being read, or {@link #NONE}. */
    private long requestSince = NONE;
    /** Requests whose answer has not ended. */
    private int unanswered;
    private boolean authenticated;
    private boolean upgraded;

    RequestClock(NetworkLimits limits, long openedNanos) {
        this.requestTimeoutNanos = limits.requestTimeout().toNanos();
        this.firstRequestTimeoutNanos = limits.firstRequestTimeout().toNanos();
        this.waitingSince = openedNanos;
    }

    /** Bytes arrived: the first of a request starts its clock. */
    void bytes(long nowNanos) {
        if (requestSince == NONE && !upgraded) {
            requestSince = nowNanos;
        }
    }

    /** A request's headers arrived whole (a pipelined one may come in the bytes of the one before). */
    void requestHeaders(long nowNanos) {
        unanswered++;
        bytes(nowNanos);
    }

    /** The request's body ended: the request arrived whole (answered already, the wait for the next starts). */
    void requestEnded(long nowNanos) {
        requestSince = NONE;
        if (unanswered == 0) {
            waitingSince = nowNanos;
        }
    }

    /** An answer ended: unless its request is still arriving, the wait for the next request starts. */
    void answerEnded(long nowNanos) {
        unanswered = Math.max(0, unanswered - 1);
        if (unanswered == 0 && requestSince == NONE) {
            waitingSince = nowNanos;
        }
    }

    /** A request of this connection authenticated (a cluster's or the admin's credential). */
    void authenticated() {
        authenticated = true;
    }

    /** The connection is a WebSocket now: no request is read on it any more. */
    void upgraded() {
        upgraded = true;
        requestSince = NONE;
    }

    boolean isAuthenticated() {
        return authenticated;
    }

    /** Whether it waits for a request: none is arriving nor being answered, and it is not a WebSocket. */
    boolean waiting() {
        return requestSince == NONE && unanswered == 0 && !upgraded;
    }

    /** Whether part of a request arrived and not all of it. */
    boolean reading() {
        return requestSince != NONE;
    }

    Due due() {
        if (upgraded) {
            return new Due.Never();
        }
        Due.At first = authenticated ? null : new Due.At(waitingSince + firstRequestTimeoutNanos, Limit.FIRST_REQUEST);
        if (requestSince != NONE) {
            Due.At request = new Due.At(requestSince + requestTimeoutNanos, Limit.REQUEST);
            return first != null && first.nanos() - request.nanos() <= 0 ? first : request;
        }
        return unanswered > 0 || first == null ? new Due.Never() : first;
    }
}
