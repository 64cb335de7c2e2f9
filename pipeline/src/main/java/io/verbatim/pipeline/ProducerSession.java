package io.verbatim.pipeline;

import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/** An ordered channel from one replicator to one remote segment. */
public interface ProducerSession extends Disposable {

    /**
     * Sends a stamped entry. Sends are issued in call order.
     *
     * @param position the source position the entry is stamped with (the destination deduplicates on it)
     * @return the receipt, or an error: a {@link RemoteException} names what happened
     */
    Mono<Receipt> send(Entry entry, SourcePosition position);

    /** What the destination did with a sent entry. */
    enum Receipt {
        /** Stored now. */
        PERSISTED,
        /** Stored before: the destination had already persisted this position for this producer. */
        DUPLICATE
    }
}
