package io.verbatim.embedded;

import java.time.Duration;

/** What the simulated network and remote do to one send. */
public sealed interface SendFault {
    SendFault NONE = new None();

    /** Delivered, receipt on time. */
    record None() implements SendFault {
    }

    /** Lost on the way: never delivered, the send fails. */
    record LostRequest() implements SendFault {
    }

    /** Delivered and stored, but the receipt is lost: the send fails. */
    record LostReceipt() implements SendFault {
    }

    /** Delivered; the receipt arrives after {@code delay} (a slow or far remote). */
    record Delay(Duration delay) implements SendFault {
    }

    /** Never answered: only the replicator's send timeout ends it. */
    record Hang() implements SendFault {
    }

    /**
     * It arrives and the remote refuses it (a storage error, a quota): nothing stored, and the refusal
     * reaches the sender after {@code delay}.
     */
    record Rejected(Duration delay) implements SendFault {
    }
}
