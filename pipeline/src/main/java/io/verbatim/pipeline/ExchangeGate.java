package io.verbatim.pipeline;

import reactor.core.publisher.Flux;

/**
 * Whether a remote takes part in the layout exchange (PIP-495's R-C11: a replicator writes to a remote
 * only while it does; a remote that does not implement the exchange is reported, never written to).
 * The verdict is re-evaluated, not latched: a remote may answer later, or stop answering.
 */
@FunctionalInterface
public interface ExchangeGate {

    /**
     * The verdict on {@code remoteCluster}: the current one at subscription (nothing while there is none
     * yet), then each change. Completing keeps the last verdict; an error is logged and the gate asked
     * again after backoff.
     */
    Flux<Readiness> readiness(String remoteCluster);

    enum Readiness {
        READY,
        UNSUPPORTED
    }

    /** A gate for remotes known to speak the exchange (tests, single-process runtimes). */
    static ExchangeGate alwaysReady() {
        return remote -> Flux.just(Readiness.READY);
    }
}
