package io.verbatim.pipeline;

import io.verbatim.budget.InFlightBudget;
import io.verbatim.budget.SlowPathBudget;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import reactor.core.scheduler.Scheduler;
import reactor.test.scheduler.VirtualTimeScheduler;

/** One source cluster {@code a}, one remote {@code b}, one virtual clock, replicators built by hand. */
final class Fixture {
    final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    final MemorySegments a;
    final MemorySegments b;
    ReplicatorConfig config = ReplicatorConfig.defaults("a").withRetry(Duration.ofMillis(10), Duration.ofSeconds(1), 0)
            .withStartAt(StartAt.EARLIEST);
    SlowPathBudget budget = SlowPathBudget.unlimited();
    InFlightBudget inFlightBudget = InFlightBudget.unlimited();
    /** What stands between the replicator and {@code b} (default: nothing). */
    UnaryOperator<RemoteCluster> network = r -> r;
    ExchangeGate exchangeGate = ExchangeGate.alwaysReady();
    Scheduler cpu = clock;
    final ReplicatorMetrics metrics = new ReplicatorMetrics();

    Fixture(Layout sourceLayout, Layout remoteLayout) {
        a = new MemorySegments("a", sourceLayout, clock).replicateTo("b", StartAt.EARLIEST);
        b = new MemorySegments("b", remoteLayout, clock);
    }

    Fixture(Layout layout) {
        this(layout, layout);
    }

    SegmentReplicator replicator(long segmentId) {
        Segment s = a.layout().segment(segmentId).orElseThrow();
        return SegmentReplicator.builder().config(config).topic(a.topic()).source(s, a.log(segmentId))
                .drainGate(a.drainGate()).remote(network.apply(b.asRemote())).exchangeGate(exchangeGate).budget(budget)
                .inFlightBudget(inFlightBudget).timer(clock).cpu(cpu).metrics(metrics).build();
    }

    /** {@code count} messages with keys {@code key-0..key-(keys-1)} and payload {@code a/<n>}. */
    static List<Message> messages(int from, int count, int keys) {
        List<Message> messages = new ArrayList<>();
        for (int n = from; n < from + count; n++) {
            messages.add(Message.of("key-" + (n % keys), ("a/" + n + "/").getBytes(StandardCharsets.UTF_8)));
        }
        return messages;
    }

    /** Produces one entry per call of {@link #messages} batch, split per bucket by the cluster. */
    void produce(int from, int count, int keys, Compression codec) {
        a.produce(messages(from, count, keys), codec);
    }

    /** The payload ids stored on {@code b}, in delivery order. */
    List<String> deliveredToB() {
        return Invariants.stored(b).stream().map(s -> s.origin() + "/" + s.counter()).toList();
    }

    void advance(Duration d) {
        clock.advanceTimeBy(d);
    }
}
