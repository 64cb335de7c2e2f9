package io.verbatim.metastore.server;

import io.verbatim.metastore.proto.RaftMessageProto;
import io.verbatim.metastore.transport.RaftMessages;
import io.verbatim.metastore.transport.RaftTransport;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/** Members of one JVM handing each other messages at once; a member can be cut off. */
final class LoopNetwork {
    private final Map<String, Sinks.Many<RaftMessageProto>> inboxes = new ConcurrentHashMap<>();
    private final Set<String> isolated = ConcurrentHashMap.newKeySet();

    RaftTransport join(String member) {
        Sinks.Many<RaftMessageProto> inbox = Sinks.many().unicast().onBackpressureBuffer();
        inboxes.put(member, inbox);
        return new RaftTransport() {
            @Override
            public void send(RaftMessageProto message) {
                String to = RaftMessages.to(message);
                Sinks.Many<RaftMessageProto> target = inboxes.get(to);
                if (target != null && !isolated.contains(member) && !isolated.contains(to)) {
                    synchronized (target) {
                        target.tryEmitNext(message);
                    }
                }
            }

            @Override
            public Flux<RaftMessageProto> inbound() {
                return inbox.asFlux();
            }

            @Override
            public void close() {
                inboxes.remove(member, inbox);
                inbox.tryEmitComplete();
            }
        };
    }

    void isolate(String member) {
        isolated.add(member);
    }

    void heal(String member) {
        isolated.remove(member);
    }
}
