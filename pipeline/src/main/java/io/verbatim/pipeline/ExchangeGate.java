package io.verbatim.pipeline;

import reactor.core.publisher.Mono;

/**
 * Whether a remote has answered the layout exchange (PIP-495: a replicator starts toward a remote only
 * once it has; a remote that does not implement the exchange is reported, never written to).
 */
@FunctionalInterface
public interface ExchangeGate {

    /** Completes with the remote's answer once there is one. */
    Mono<Readiness> awaitAnswer(String remoteCluster);

    enum Readiness {
        READY,
        UNSUPPORTED
    }

    /** A gate for remotes known to speak the exchange (tests, single-process runtimes). */
    static ExchangeGate alwaysReady() {
        return remote -> Mono.just(Readiness.READY);
    }
}
