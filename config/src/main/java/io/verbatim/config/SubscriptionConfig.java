package io.verbatim.config;

/**
 * How a cluster's PIP-486 subscriptions dispatch, unless a subscription is opened with its own value.
 *
 * @param receiverQueueSize the entries one consumer's queue holds at most (Pulsar's {@code receiverQueueSize},
 *        counted in entries, not messages): once it is full, the segment whose next entry that consumer owns
 *        stops reading its cursor until the consumer reads
 */
public record SubscriptionConfig(int receiverQueueSize) {
    /** Pulsar's default {@code receiverQueueSize}. */
    public static final int DEFAULT_RECEIVER_QUEUE_SIZE = 1000;
    /** More than this per consumer is a mistake, not a tuning: entries may be megabytes each. */
    public static final int MAX_RECEIVER_QUEUE_SIZE = 1_000_000;

    public SubscriptionConfig {
        if (receiverQueueSize < 1 || receiverQueueSize > MAX_RECEIVER_QUEUE_SIZE) {
            throw new IllegalArgumentException("receiverQueueSize: " + receiverQueueSize + " is out of range "
                    + "(expected an integer within [1, " + MAX_RECEIVER_QUEUE_SIZE + "]: the entries one consumer's "
                    + "queue holds)");
        }
    }

    public static SubscriptionConfig defaults() {
        return new SubscriptionConfig(DEFAULT_RECEIVER_QUEUE_SIZE);
    }

    public SubscriptionConfig withReceiverQueueSize(int value) {
        return new SubscriptionConfig(value);
    }
}
