package io.verbatim.embedded;

import io.verbatim.model.Layout;
import io.verbatim.pipeline.ReplicationCursorContract;
import io.verbatim.pipeline.SourceSegmentLog;
import reactor.core.scheduler.Schedulers;

/** The in-memory log passes the cursor contract. */
class MemoryCursorTest extends ReplicationCursorContract {

    @Override
    protected SourceSegmentLog newLog() {
        return new MemorySegments("x", Layout.initial(1, 1, 0), Schedulers.immediate()).log(0);
    }

    @Override
    protected void append(SourceSegmentLog log, int count) {
        for (int i = 0; i < count; i++) {
            ((MemorySegmentLog) log).append(anEntry(i));
        }
    }

    @Override
    protected void seal(SourceSegmentLog log) {
        ((MemorySegmentLog) log).seal();
    }
}
