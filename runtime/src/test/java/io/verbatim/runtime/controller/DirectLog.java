package io.verbatim.runtime.controller;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.server.ReplicatedLog;
import io.verbatim.metadatalog.server.StateMachine;
import reactor.core.publisher.Mono;

/** A group of one that commits at once: the ownership rules without Raft around them. */
final class DirectLog implements ReplicatedLog {
    private final StateMachine machine;
    private long index;

    DirectLog(StateMachine machine) {
        this.machine = machine;
    }

    @Override
    public synchronized Mono<Object> submit(ByteString command) {
        return Mono.fromCallable(() -> {
            synchronized (this) {
                return machine.apply(++index, command);
            }
        });
    }

    @Override
    public Mono<Void> readBarrier() {
        return Mono.empty();
    }
}
