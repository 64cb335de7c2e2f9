package org.apache.pulsar.client.impl;

/** For tests: what the broker's commands do to a raw consumer, when the test needs them at a moment of its own. */
public final class RawConsumerEvents {
    private RawConsumerEvents() {
    }

    /** The broker's "reached the end of the topic", as it says it to {@code consumer}. */
    public static void reachedEndOfTopic(VerbatimRawConsumer consumer) {
        consumer.setTerminated();
    }
}
