package io.verbatim.testkit;

import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession.Receipt;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteCluster;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A remote whose sends each go through an interceptor, everything else (name, layouts, sessions' disposal)
 * passed through: the one place a test, a bench or a simulated link puts itself in front of a remote's sends.
 */
public final class InterceptedRemote {
    private InterceptedRemote() {
    }

    /** What happens to one send: given the entry, its position and the real send (cold), the send to make. */
    @FunctionalInterface
    public interface SendInterceptor {
        Mono<Receipt> apply(Entry entry, SourcePosition position, Mono<Receipt> send);
    }

    /** {@code remote}, each send of each of its sessions going through {@code interceptor}. */
    public static RemoteCluster of(RemoteCluster remote, SendInterceptor interceptor) {
        return new RemoteCluster() {
            @Override
            public String name() {
                return remote.name();
            }

            @Override
            public Flux<Layout> layouts() {
                return remote.layouts();
            }

            @Override
            public Flux<Long> reachedAgain() {
                return remote.reachedAgain();
            }

            @Override
            public ProducerSession open(long segmentId, String producerName) {
                return intercepted(remote.open(segmentId, producerName));
            }

            @Override
            public ProducerSession open(long segmentId, String producerName, HashRange source) {
                return intercepted(remote.open(segmentId, producerName, source));
            }

            private ProducerSession intercepted(ProducerSession session) {
                return new ProducerSession() {
                    @Override
                    public Mono<Receipt> send(Entry entry, SourcePosition position) {
                        return interceptor.apply(entry, position, session.send(entry, position));
                    }

                    @Override
                    public void dispose() {
                        session.dispose();
                    }

                    @Override
                    public boolean isDisposed() {
                        return session.isDisposed();
                    }
                };
            }
        };
    }
}
