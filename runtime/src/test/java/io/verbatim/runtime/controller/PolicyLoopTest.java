package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.config.AutoScaleConfig;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.Controller;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.runtime.broker.LoadTracker;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The local policy holds back while its load is not current: no report is not a cold topic. */
class PolicyLoopTest {
    @Test
    void whileTheLoadIsStaleNothingIsEvaluatedAndOnceItIsCurrentTheTopicIs() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        Controller controller = new Controller("a", Set.of("b"), Caps.PULSAR_DEFAULTS, new InMemoryLayoutStore(), time);
        AtomicInteger read = new AtomicInteger();
        AtomicReference<Optional<String>> stale = new AtomicReference<>(Optional.of("no report from a's brokers"));
        PolicyLoop policy = new PolicyLoop("a", AutoScaleConfig.pulsarDefaults(), controller, topic -> {
            read.incrementAndGet();
            throw new IllegalStateException("read " + topic);
        }, topic -> new LoadTracker(), topic -> 0, new SimpleMeterRegistry(), time).holdWhile(stale::get);

        policy.evaluate("t").block();
        assertThat(read).as("held back: neither layout nor load read").hasValue(0);
        assertThat(policy.decisions()).isEmpty();

        stale.set(Optional.empty());
        try {
            policy.evaluate("t").block();
        } catch (IllegalStateException expected) {
            // the stub layout function: the policy did evaluate
        }
        assertThat(read).hasValue(1);
    }
}
