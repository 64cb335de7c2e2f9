package io.verbatim.exchange;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The R-C11 verdict on each peer: {@code true} once it answered the exchange, {@code false} while it
 * answers that it has no exchange endpoint. Re-evaluated on every call, never latched: a peer that
 * answers after a 404 is a peer that answers.
 */
final class PeerVerdicts {
    private final Map<String, Sinks.Many<Boolean>> sinks = new ConcurrentHashMap<>();
    private final Map<String, Boolean> latest = new ConcurrentHashMap<>();

    void answered(String peer) {
        set(peer, true);
    }

    void unsupported(String peer) {
        set(peer, false);
    }

    private void set(String peer, boolean verdict) {
        Sinks.Many<Boolean> sink = sink(peer);
        synchronized (sink) {
            Boolean before = latest.put(peer, verdict);
            if (before == null || before != verdict) {
                sink.emitNext(verdict, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
            }
        }
    }

    /** The latest verdict (once there is one), then every change. */
    Flux<Boolean> of(String peer) {
        return sink(peer).asFlux();
    }

    boolean isUnsupported(String peer) {
        return Boolean.FALSE.equals(latest.get(peer));
    }

    /** The latest verdict, for the status. */
    PeerStatus.Verdict verdict(String peer) {
        Boolean v = latest.get(peer);
        return v == null ? PeerStatus.Verdict.NO_ANSWER_YET : v ? PeerStatus.Verdict.ANSWERED
                : PeerStatus.Verdict.UNSUPPORTED;
    }

    private Sinks.Many<Boolean> sink(String peer) {
        return sinks.computeIfAbsent(peer, p -> Sinks.many().replay().latest());
    }
}
