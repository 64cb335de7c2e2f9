package io.verbatim.metadatalog.state;

import io.verbatim.layoutstore.EpochRule;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.layoutstore.StaleEpochException;
import io.verbatim.metadatalog.proto.CompareAndSetLayout;
import io.verbatim.metadatalog.proto.CreateTopic;
import io.verbatim.metadatalog.proto.LayoutCommand;
import io.verbatim.metadatalog.server.ReplicatedLog;
import io.verbatim.model.Layout;
import io.verbatim.model.LayoutCodec;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link LayoutStore} on the metadata log: writes are commands through the group's leader, reads are
 * linearizable (a read barrier, then this member's replica), and a watch follows this member's own
 * replica, so a broker that is a listener watches layouts without asking the leader. A watch of a topic
 * not created yet waits for it.
 */
public final class RaftLayoutStore implements LayoutStore {
    private final ReplicatedLog log;
    private final LayoutRegister register;
    private final Scheduler callbacks;

    /**
     * @param register the state machine {@code log} applies to
     * @param callbacks where answers and watched layouts are delivered: never the member's own thread, so
     *     a subscriber that blocks or works long does not hold up the log
     */
    public RaftLayoutStore(ReplicatedLog log, LayoutRegister register, Scheduler callbacks) {
        this.log = log;
        this.register = register;
        this.callbacks = callbacks;
    }

    /** Answers delivered on {@link Schedulers#boundedElastic()}. */
    public RaftLayoutStore(ReplicatedLog log, LayoutRegister register) {
        this(log, register, Schedulers.boundedElastic());
    }

    @Override
    public Mono<Layout> get(String topic) {
        return log.readBarrier().publishOn(callbacks).then(Mono.fromCallable(() -> register.get(topic).orElse(null)));
    }

    @Override
    public Mono<Layout> create(String topic, Layout initial) {
        LayoutCommand command = LayoutCommand.newBuilder().setTopic(topic)
                .setCreate(CreateTopic.newBuilder().setInitial(LayoutCodec.toProto(initial))).build();
        return submit(topic, command);
    }

    @Override
    public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
        // refused before proposing what the state machine would refuse anyway (the same rule)
        Optional<EpochRule.Verdict.Invalid> never = EpochRule.notForward(topic, expectedEpoch, next.epoch());
        if (never.isPresent()) {
            return Mono.error(never.get().exception());
        }
        LayoutCommand command = LayoutCommand.newBuilder().setTopic(topic).setCompareAndSet(CompareAndSetLayout
                .newBuilder().setExpectedEpoch(expectedEpoch).setNext(LayoutCodec.toProto(next))).build();
        return submit(topic, command);
    }

    private Mono<Layout> submit(String topic, LayoutCommand command) {
        return log.submit(command.toByteString()).publishOn(callbacks).map(outcome -> {
            if (outcome instanceof LayoutOutcome.Stored s) {
                return s.layout();
            }
            if (outcome instanceof LayoutOutcome.Stale s) {
                throw new StaleEpochException(topic, s.expectedEpoch(), s.actualEpoch());
            }
            throw new IllegalArgumentException(((LayoutOutcome.Invalid) outcome).reason());
        });
    }

    @Override
    public Flux<Layout> watch(String topic) {
        return Flux.defer(() -> register.watch(topic)).publishOn(callbacks);
    }

    @Override
    public Flux<String> topics() {
        return log.readBarrier().publishOn(callbacks).thenMany(Flux.defer(() -> Flux.fromIterable(register.topics())));
    }

    /** This member's replica, without a barrier: what a watch has seen, possibly behind the leader. */
    public Mono<Layout> getLocal(String topic) {
        return Mono.fromCallable(() -> register.get(topic).orElse(null));
    }

    /** The topics of this member's replica, without a barrier: possibly behind the leader. */
    public Flux<String> topicsLocal() {
        return Flux.defer(() -> Flux.fromIterable(register.topics()));
    }
}
