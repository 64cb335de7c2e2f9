package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A node reads its own writes with one path of adoption: only the layout store's watch hands layouts to the
 * node's storage, and a commit of the controller's (an admin split) is answered once the storage serves it, even
 * when the watch is behind (a listener's replica of the metadata log); a watch that never brings it holds the
 * answer no longer than the exchange's request timeout. Time is virtual: nothing sleeps.
 */
class ReadYourWritesTest {
    private static final String T = "t";
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    private static final VerbatimConfig CONFIG = VerbatimConfig.parse("""
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
            exchange: {requestTimeout: 5s}
            security: {adminToken: admin-token}
            """);

    private final VirtualTimeScheduler timer = VirtualTimeScheduler.create();
    private final Scheduler cpu = Schedulers.newBoundedElastic(2, 1000, "ryw-cpu");
    private ClusterNode node;
    private ClusterNode peer;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
        if (peer != null) {
            peer.close();
        }
        timer.dispose();
        cpu.dispose();
    }

    /** An in-memory store whose watch is what {@code watch} makes of the true one. */
    private static LayoutStore watchedThrough(UnaryOperator<Flux<Layout>> watch) {
        InMemoryLayoutStore inner = new InMemoryLayoutStore();
        return new LayoutStore() {
            @Override
            public Mono<Layout> get(String topic) {
                return inner.get(topic);
            }

            @Override
            public Mono<Layout> create(String topic, Layout initial) {
                return inner.create(topic, initial);
            }

            @Override
            public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
                return inner.compareAndSet(topic, expectedEpoch, next);
            }

            @Override
            public Flux<Layout> watch(String topic) {
                return watch.apply(inner.watch(topic));
            }

            @Override
            public Flux<String> topics() {
                return inner.topics();
            }
        };
    }

    /**
     * Node a on {@code store}, started, and its peer b's state of the topic taken (as b's call would bring it), so a's
     * own changes no longer wait for every peer after its start.
     */
    private ClusterNode started(LayoutStore store) {
        node = new ClusterNode(CONFIG, "a", store, timer, cpu).start();
        peer = new ClusterNode(CONFIG, "b", new InMemoryLayoutStore(), timer, cpu).start();
        node.controller().receive(peer.controller().stateFor("a").block()).block();
        assertThat(node.controller().deferringOwnChanges()).isFalse();
        return node;
    }

    @Test
    void anAdminSplitIsAnsweredOnceThisNodesStorageServesItThoughTheWatchLags() {
        started(watchedThrough(w -> w.delayElements(Duration.ofSeconds(1), timer)));
        timer.advanceTimeBy(Duration.ofSeconds(1)); // the first layout, as the store held it at start
        assertThat(node.layout(T).epoch()).isZero();

        AtomicReference<Outcome> answer = new AtomicReference<>();
        AtomicLong servedAtAnswer = new AtomicLong(-1);
        node.split(T, 0).subscribe(o -> {
            servedAtAnswer.set(node.layout(T).epoch());
            answer.set(o);
        });
        assertThat(answer.get()).as("committed, not yet served here").isNull();
        assertThat(node.controller().store().get(T).block().epoch()).isEqualTo(1);
        assertThat(node.layout(T).epoch()).isZero();

        timer.advanceTimeBy(Duration.ofSeconds(1)); // the watch brings epoch 1: the storage takes it, then the answer
        assertThat(answer.get()).isInstanceOf(Outcome.Applied.class);
        assertThat(servedAtAnswer.get()).as("the epoch this node served when the split was answered").isEqualTo(1);
        assertThat(node.layout(T).activeSegments()).hasSize(2);
    }

    @Test
    void aWatchThatNeverBringsTheCommitHoldsTheAnswerHalfTheRequestTimeout() {
        // the watch gives the layout held at start, then nothing: the metadata log's listener is stuck
        started(watchedThrough(w -> w.take(1).concatWith(Flux.never())));
        AtomicReference<Outcome> answer = new AtomicReference<>();
        node.split(T, 0).subscribe(answer::set);
        // half: a peer whose call waits on this commit (for as long as the request timeout) gets a late answer, not none
        timer.advanceTimeBy(REQUEST_TIMEOUT.dividedBy(2).minusMillis(1));
        assertThat(answer.get()).as("still waiting for the watch").isNull();

        timer.advanceTimeBy(Duration.ofMillis(1));
        assertThat(answer.get()).as("answered (the commit stands), the storage still behind")
                .isInstanceOf(Outcome.Applied.class);
        assertThat(node.layout(T).epoch()).isZero();
    }

    @Test
    void aCommitTheWatchAlreadyBroughtIsAnsweredAtOnce() {
        started(new InMemoryLayoutStore());
        AtomicReference<Outcome> answer = new AtomicReference<>();
        node.split(T, 0).subscribe(answer::set);
        assertThat(answer.get()).isInstanceOf(Outcome.Applied.class);
        assertThat(node.layout(T).epoch()).isEqualTo(1);
    }
}
