package io.verbatim.embedded;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.DrainGate;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The parent-drain gate over a {@link MemorySegments}'s cursors: a segment counts as drained once it is sealed,
 * its cursor has acknowledged everything, and its own parents count as drained. Transitively: an empty segment
 * between a child and a grandparent with backlog must not open the child's gate. Waits on the logs' changes,
 * not on a timer.
 */
final class MemoryDrainGate implements DrainGate {
    private final Supplier<Layout> layout;
    private final SegmentLogs logs;

    MemoryDrainGate(Supplier<Layout> layout, SegmentLogs logs) {
        this.layout = layout;
        this.logs = logs;
    }

    @Override
    public Mono<Void> drained(long segmentId, String cursorName) {
        List<Long> parents = layout.get().segment(segmentId).map(Segment::parentIds).orElse(List.of());
        return Flux.fromIterable(parents).flatMap(p -> drained(p, cursorName))
                .then(selfDrained(segmentId, cursorName));
    }

    private Mono<Void> selfDrained(long segmentId, String cursorName) {
        return Mono.create(sink -> {
            MemorySegmentLog log = logs.get(segmentId);
            if (log == null) {
                sink.success(); // pruned: drained by definition
                return;
            }
            Runnable check = () -> {
                Optional<MemoryCursor> cursor = log.existingCursor(cursorName);
                if (log.isSealed() && (cursor.isEmpty() || cursor.get().backlog() == 0)) {
                    sink.success();
                }
            };
            sink.onDispose(log.onChange(check));
            check.run();
        });
    }
}
