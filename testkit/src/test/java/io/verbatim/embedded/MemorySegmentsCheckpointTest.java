package io.verbatim.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import io.verbatim.pipeline.StartAt;
import io.verbatim.testkit.ManualJournal;
import java.util.List;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** A checkpoint's image holds at least every record up to the sequence number it is taken with. */
class MemorySegmentsCheckpointTest {
    private static final String TOPIC = "persistent://public/default/t";

    /** A recording journal that runs {@code hook} once, the first time the last sequence number is read after arming. */
    private static final class HookedJournal implements Journal {
        private final ManualJournal inner = new ManualJournal();
        private Runnable hook = () -> { };

        @Override
        public long append(Record record) {
            return inner.append(record);
        }

        @Override
        public Mono<Void> durable(long sequence) {
            return inner.durable(sequence);
        }

        @Override
        public long lastSequence() {
            Runnable h = hook;
            hook = () -> { };
            h.run();
            return inner.lastSequence();
        }

        @Override
        public void onDurable(LongConsumer listener) {
            inner.onDurable(listener);
        }

        @Override
        public boolean keeps() {
            return true;
        }
    }

    @Test
    void aCursorAcknowledgedAsACheckpointIsTakenIsInItsImageOrReplayedAfterIt() {
        HookedJournal journal = new HookedJournal();
        MemorySegments c = new MemorySegments("east", TOPIC, Layout.initial(1, 4, 0), Schedulers.immediate(), journal,
                LedgerIds.fromFloor(100));
        MemoryCursor cursor = c.log(0).openCursor("sub", StartAt.EARLIEST);
        for (int i = 0; i < 3; i++) {
            c.produce(List.of(Message.of("k", new byte[] {(byte) i})), Compression.NONE);
        }
        journal.inner.flush();
        // a cursor's acknowledgement is written outside the cluster's lock: here, as the checkpoint reads the sequence
        journal.hook = () -> cursor.acknowledge(c.log(0).entries().get(1).position()).block();
        MemorySegments.Checkpoint cp = c.checkpoint();

        MemorySegments recovered = MemorySegments.restore("east", TOPIC, cp.image(), Schedulers.immediate());
        journal.inner.between(cp.sequence(), journal.inner.lastSequence()).forEach(recovered::replay);
        assertThat(recovered.log(0).existingCursor("sub").orElseThrow().markDeleteIndex()).isEqualTo(1);
    }
}
