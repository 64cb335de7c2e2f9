package io.verbatim.exchange;

import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import reactor.core.publisher.Mono;

/**
 * Makes a {@link ClusterStatus} from what a {@link Controller} holds, read at one instant: per peer the
 * exchange's verdict, per topic and remote the divergence of the two layouts, the lag, the caps and the
 * marks. Reads only; the controller keeps the protocol.
 */
final class StatusAssembler {
    private final Controller controller;
    private final Controller.BacklogSource backlog;
    private final long nowNanos;

    private StatusAssembler(Controller controller, Controller.BacklogSource backlog, long nowNanos) {
        this.controller = controller;
        this.backlog = backlog;
        this.nowNanos = nowNanos;
    }

    static Mono<ClusterStatus> status(Controller controller, Controller.BacklogSource backlog) {
        return Mono.defer(() -> new StatusAssembler(controller, backlog, controller.nowNanos()).status());
    }

    private Mono<ClusterStatus> status() {
        return controller.store().topics()
                .concatMap(topic -> controller.store().get(topic).map(layout -> Map.entry(topic, topic(topic, layout))))
                .collectMap(Map.Entry::getKey, Map.Entry::getValue, LinkedHashMap::new)
                .map(topics -> new ClusterStatus(controller.cluster(), controller.caps(),
                        controller.deferringOwnChanges(), peers(), topics));
    }

    private Map<String, PeerStatus> peers() {
        Map<String, PeerStatus> out = new LinkedHashMap<>();
        for (String peer : controller.peers()) {
            String failure = controller.metrics().lastFailure(peer);
            out.put(peer, new PeerStatus(controller.verdict(peer), age(controller.lastHeardNanos(peer)),
                    failure.isEmpty() ? Optional.empty() : Optional.of(failure)));
        }
        return out;
    }

    private TopicStatus topic(String topic, Layout layout) {
        Shape local = Shape.of(layout);
        Set<Integer> agreed = Divergence.agreed(local, controller.exchangedMarks(topic), controller.statesOf(topic));
        Map<String, RemoteStatus> remotes = new LinkedHashMap<>();
        for (String peer : controller.peers()) {
            Optional<RemoteStatus.Held> held = controller.heldState(topic, peer).map(s -> held(local, s, agreed, peer));
            remotes.put(peer, new RemoteStatus(held, controller.acknowledgedEpoch(peer, topic), controller.verdict(peer),
                    controller.refusedOurState(peer, topic), backlog.backlog(topic, peer)));
        }
        return new TopicStatus(layout.epoch(), local.cells().stream().map(Divergence::describe).toList(),
                controller.convergence().lag(topic, nowNanos), controller.capMismatches(topic),
                controller.capLimited(topic), controller.effectiveCaps(topic), controller.exchangedMarksDescribed(topic),
                controller.recentChanges(topic), remotes);
    }

    private RemoteStatus.Held held(Shape local, PeerState s, Set<Integer> agreed, String peer) {
        Divergence d = Divergence.of(local, Divergence.comparable(s.shape(), agreed));
        // A state is kept only once its sender was heard; a state landing after the clock was read is 0 old.
        Duration age = age(controller.lastHeardNanos(peer)).orElse(Duration.ZERO);
        return new RemoteStatus.Held(s.epoch(), d.converged(), d.diverged(), age, !s.caps().equals(controller.caps()));
    }

    /** How long before now; never negative (what is heard may land between reading the clock and here). */
    private Optional<Duration> age(OptionalLong sinceNanos) {
        return sinceNanos.isPresent() ? Optional.of(Duration.ofNanos(Math.max(0, nowNanos - sinceNanos.getAsLong())))
                : Optional.empty();
    }
}
