package io.verbatim.pipeline;

/** A send that did not store the entry; {@link #kind()} says why and what the replicator does about it. */
public final class RemoteException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why a send failed. */
    public enum Kind {
        /** The destination segment is sealed (the remote split, merged or rebucketed): re-route. */
        SEALED,
        /** The remote could not be reached or timed out: retry after backoff. */
        UNAVAILABLE,
        /** The destination refused the entry because an earlier one of the session is missing: rewind. */
        OUT_OF_ORDER,
        /** This position is pushed but not yet persisted at the destination: retry later. */
        IN_FLIGHT,
        /** An earlier send of the session failed, so this one was not sent. */
        SESSION_BROKEN,
        /**
         * The destination refused a source position implausibly far past the highest it stored (one such entry
         * would make every later one a duplicate): retry after backoff; it is reported at the destination.
         */
        IMPLAUSIBLE,
        /** The destination rejected the entry (any other reason): retry after backoff. */
        REJECTED,
        /** The remote does not implement the layout exchange: never written to. */
        UNSUPPORTED
    }

    private final Kind kind;
    private final long segmentId;

    public RemoteException(Kind kind, long segmentId, String message) {
        super(kind + " (remote segment " + segmentId + "): " + message);
        this.kind = kind;
        this.segmentId = segmentId;
    }

    public Kind kind() {
        return kind;
    }

    public long segmentId() {
        return segmentId;
    }

    public static boolean isSealed(Throwable t) {
        return t instanceof RemoteException e && e.kind == Kind.SEALED;
    }
}
