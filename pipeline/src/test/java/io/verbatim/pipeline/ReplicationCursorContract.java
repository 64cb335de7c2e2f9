package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * What every {@link SourceSegmentLog} and {@link ReplicationCursor} must do, whatever stores the
 * entries. Each implementation runs this suite through a subclass.
 */
public abstract class ReplicationCursorContract {

    /** A fresh, empty, unsealed segment log. */
    protected abstract SourceSegmentLog newLog();

    protected abstract void append(SourceSegmentLog log, int count);

    protected abstract void seal(SourceSegmentLog log);

    private ReplicationCursor cursor(SourceSegmentLog log, String name, StartAt startAt) {
        return log.cursor(name, startAt).block(Duration.ofSeconds(5));
    }

    @Test
    void readsInOrderAndOnlyAsMuchAsRequested() {
        SourceSegmentLog log = newLog();
        append(log, 10);
        ReplicationCursor cursor = cursor(log, "c", StartAt.EARLIEST);
        StepVerifier.create(cursor.read(), 0)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(10))
                .thenRequest(3)
                .expectNextMatches(e -> e.position().entryId() == 0)
                .expectNextMatches(e -> e.position().entryId() == 1)
                .expectNextMatches(e -> e.position().entryId() == 2)
                .expectNoEvent(Duration.ofMillis(10))
                .thenCancel()
                .verify();
    }

    @Test
    void followsTheTailAndCompletesAtTheEndOfASealedSegment() {
        SourceSegmentLog log = newLog();
        ReplicationCursor cursor = cursor(log, "c", StartAt.EARLIEST);
        StepVerifier.create(cursor.read().concatMap(e -> cursor.acknowledge(e.position()).thenReturn(e)))
                .expectSubscription()
                .then(() -> append(log, 2))
                .expectNextCount(2)
                .then(() -> seal(log))
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void readingStartsAfterTheAcknowledgedPositionAndSurvivesReopening() {
        SourceSegmentLog log = newLog();
        append(log, 5);
        ReplicationCursor cursor = cursor(log, "c", StartAt.EARLIEST);
        SourcePosition third = cursor.read().take(3).last().block(Duration.ofSeconds(5)).position();
        cursor.acknowledge(third).block(Duration.ofSeconds(5));
        assertThat(cursor.backlog()).isEqualTo(2);
        ReplicationCursor reopened = cursor(log, "c", StartAt.LATEST); // an existing cursor keeps its place
        seal(log);
        StepVerifier.create(acknowledging(reopened).map(e -> e.position().entryId()))
                .expectNext(3L, 4L)
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void acknowledgementNeverMovesBackwards() {
        SourceSegmentLog log = newLog();
        append(log, 4);
        ReplicationCursor cursor = cursor(log, "c", StartAt.EARLIEST);
        var positions = cursor.read().take(4).map(StoredEntry::position).collectList().block(Duration.ofSeconds(5));
        cursor.acknowledge(positions.get(3)).block(Duration.ofSeconds(5));
        cursor.acknowledge(positions.get(1)).block(Duration.ofSeconds(5));
        assertThat(cursor.backlog()).isZero();
    }

    @Test
    void aNewCursorAtLatestStartsAfterWhatIsThere() {
        SourceSegmentLog log = newLog();
        append(log, 3);
        ReplicationCursor cursor = cursor(log, "late", StartAt.LATEST);
        assertThat(cursor.backlog()).isZero();
        append(log, 1);
        seal(log);
        StepVerifier.create(acknowledging(cursor).map(e -> e.position().entryId())).expectNext(3L)
                .expectComplete().verify(Duration.ofSeconds(10));
    }

    @Test
    void aReadAfterACancelledOneStartsAfterTheAcknowledgedEntry() {
        SourceSegmentLog log = newLog();
        append(log, 6);
        ReplicationCursor cursor = cursor(log, "c", StartAt.EARLIEST);
        // read four, acknowledge two: the next read starts at the third, whatever the first one had read
        var firstFour = cursor.read().take(4).collectList().block(Duration.ofSeconds(5));
        cursor.acknowledge(firstFour.get(1).position()).block(Duration.ofSeconds(5));
        seal(log);
        StepVerifier.create(acknowledging(cursor).map(e -> e.position().entryId()))
                .expectNext(2L, 3L, 4L, 5L)
                .expectComplete()
                .verify(Duration.ofSeconds(10));
        assertThat(cursor.backlog()).isZero();
    }

    @Test
    void acknowledgementsAskedTogetherAllComplete() {
        SourceSegmentLog log = newLog();
        append(log, 50);
        ReplicationCursor cursor = cursor(log, "c", StartAt.EARLIEST);
        var read = cursor.read().take(50).map(StoredEntry::position).collectList().block(Duration.ofSeconds(5));
        // many at once, out of order: each completes, and the highest is where the cursor stands
        Flux.fromIterable(read).flatMap(cursor::acknowledge, 50).then()
                .block(Duration.ofSeconds(10));
        assertThat(cursor.backlog()).isZero();
    }

    /** Reads, acknowledging each entry as it goes: a cursor may end a sealed segment only once all is acknowledged. */
    private static Flux<StoredEntry> acknowledging(ReplicationCursor cursor) {
        return cursor.read().concatMap(e -> cursor.acknowledge(e.position()).thenReturn(e));
    }

    protected static ByteBuffer anEntry(int n) {
        return ByteBuffer.wrap(Entries.single(MessageMetadata
                .newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0).build(),
                ByteBuffer.wrap(new byte[] {(byte) n}), CompressionType.NONE).toByteArray());
    }
}
