package io.verbatim.metadatalog.state;

import io.verbatim.metadatalog.proto.Assign;
import io.verbatim.metadatalog.proto.LayoutCommand;
import io.verbatim.metadatalog.proto.MemberChange;
import io.verbatim.metadatalog.proto.Move;
import io.verbatim.metadatalog.proto.OwnershipChange;
import io.verbatim.metadatalog.proto.Release;
import io.verbatim.metadatalog.server.ReplicatedLog;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Segments' ownership on the metadata log, for the leader that plans it and the broker members that act on
 * it: changes are commands through the group's leader, each checked where it applies (so a stale one is
 * refused, never half-done); reads and the watch follow this member's own replica.
 */
public final class OwnershipLog {
    private final ReplicatedLog log;
    private final LayoutRegister register;
    private final Scheduler callbacks;

    /**
     * @param register the state machine {@code log} applies to
     * @param callbacks where answers and watched tables are delivered (never the member's own thread)
     */
    public OwnershipLog(ReplicatedLog log, LayoutRegister register, Scheduler callbacks) {
        this.log = log;
        this.register = register;
        this.callbacks = callbacks;
    }

    /**
     * Proposes {@code commands} as one entry; answers what applied and what the register refused. Errors with
     * what {@link ReplicatedLog#submit} errors with, and {@link IllegalArgumentException} for a change the
     * register cannot read.
     */
    public Mono<OwnershipOutcome.Applied> change(List<OwnershipCommand> commands) {
        if (commands.isEmpty()) {
            return Mono.error(new IllegalArgumentException("an ownership change needs at least one command"));
        }
        OwnershipChange.Builder b = OwnershipChange.newBuilder();
        for (OwnershipCommand c : commands) {
            if (c instanceof OwnershipCommand.Expire e) {
                b.addExpire(e.member());
            } else if (c instanceof OwnershipCommand.Release r) {
                b.addRelease(Release.newBuilder().setSegment(OwnershipRegister.ref(r.segment())).setEpoch(r.epoch())
                        .setBy(r.by()));
            } else if (c instanceof OwnershipCommand.Assign a) {
                b.addAssign(Assign.newBuilder().setSegment(OwnershipRegister.ref(a.segment())).setTo(a.to()));
            } else if (c instanceof OwnershipCommand.Move m) {
                b.addMove(Move.newBuilder().setSegment(OwnershipRegister.ref(m.segment()))
                        .setExpectedEpoch(m.expectedEpoch()).setTo(m.to()));
            }
        }
        return submit(LayoutCommand.newBuilder().setOwnership(b).build());
    }

    /** Registers {@code member} or changes its state or addresses. */
    public Mono<OwnershipOutcome.Applied> register(RegisteredMember member) {
        return submit(LayoutCommand.newBuilder()
                .setMember(MemberChange.newBuilder().setMember(OwnershipRegister.toProto(member))).build());
    }

    private Mono<OwnershipOutcome.Applied> submit(LayoutCommand command) {
        return log.submit(command.toByteString()).publishOn(callbacks).map(outcome -> {
            if (outcome instanceof OwnershipOutcome.Applied applied) {
                return applied;
            }
            if (outcome instanceof OwnershipOutcome.Invalid invalid) {
                throw new IllegalArgumentException(invalid.reason());
            }
            throw new IllegalStateException("the register answered an ownership change with " + outcome);
        });
    }

    /** This member's replica, without a barrier: possibly behind the leader. */
    public OwnershipTable local() {
        return register.ownership();
    }

    /** The table after a read barrier: everything committed before the call. */
    public Mono<OwnershipTable> read() {
        return log.readBarrier().publishOn(callbacks).then(Mono.fromCallable(register::ownership));
    }

    /** This member's replica's table, then each after a change. */
    public Flux<OwnershipTable> watch() {
        return register.watchOwnership().publishOn(callbacks);
    }
}
