package io.verbatim.runtime.broker;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Shows a PIP-486 subscription's flow control to Micrometer: each consumer's queue depth (tagged
 * {@code consumer}) and the subscription's cursor backlog, both tagged {@code subscription} and with the
 * caller's tags (a cluster node adds {@code topic}; its registry adds {@code cluster}).
 */
final class SubscriptionMetricsBinder implements MeterBinder {
    /** Entries dispatched to a consumer and not yet received: at most the receiver queue size. */
    static final String QUEUE_DEPTH = "verbatim.subscription.queue.depth";
    /** Entries the subscription's cursors hold, not yet handed to a consumer, over every segment. */
    static final String BACKLOG = "verbatim.subscription.backlog";

    private final Subscription subscription;
    private final Tags tags;
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    public SubscriptionMetricsBinder(Subscription subscription, Tags tags) {
        this.subscription = subscription;
        this.tags = tags.and("subscription", subscription.name());
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (int i = 0; i < subscription.consumers(); i++) {
            int consumer = i;
            meters.add(Gauge.builder(QUEUE_DEPTH, () -> subscription.queueDepth(consumer)).tags(tags)
                    .tag("consumer", Integer.toString(consumer)).baseUnit("entries")
                    .description("entries dispatched to the consumer and not yet received").register(registry));
        }
        meters.add(Gauge.builder(BACKLOG, subscription::backlog).tags(tags).baseUnit("entries")
                .description("entries the subscription's cursors have not handed to a consumer").register(registry));
    }

    /** Removes what {@link #bindTo} registered (a disposed subscription's gauges go with it). */
    public void unbindFrom(MeterRegistry registry) {
        meters.forEach(registry::remove);
        meters.clear();
    }
}
