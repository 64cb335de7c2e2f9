package io.verbatim.pipeline;

import io.verbatim.pipeline.RemoteException.Kind;

/**
 * What a destination does with one arriving replicated entry ({@link DestinationState#admit}). Each
 * answer carries the destination state to hold from now on.
 */
public sealed interface Admission {

    /** The state to hold after this answer. */
    DestinationState next();

    /**
     * Store the entry. Hold {@link #next()} while storing (the position counts as pushed), and once it is
     * stored, {@link DestinationState#persisted} of whatever state is held then.
     */
    record Append(DestinationState next) implements Admission {
    }

    /** Stored before: answer {@link ProducerSession.Receipt#DUPLICATE} and store nothing. */
    record Duplicate(DestinationState next) implements Admission {
    }

    /** Not taken; the sender learns {@code kind} (see {@link RemoteException.Kind}) and why. */
    record Refused(Kind kind, String message, DestinationState next) implements Admission {

        /** The refusal as the sender receives it, for remote segment {@code segmentId}. */
        public RemoteException exception(long segmentId) {
            return new RemoteException(kind, segmentId, message);
        }
    }
}
