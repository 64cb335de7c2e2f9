package io.verbatim.runtime.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.StorageConfig;
import io.verbatim.embedded.Journal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** A journal that failed (an I/O error) takes nothing more: appends and rolls throw, waits end in the error. */
class FileJournalTest {
    private static final String TOPIC = "persistent://public/default/t";

    @TempDir
    Path dir;

    private final Scheduler timer = Schedulers.newSingle("file-journal-test");

    @AfterEach
    void close() {
        timer.dispose();
    }

    private static Journal.Record reset(int n) {
        return new Journal.Record.MarkReset(TOPIC, "0/p" + n);
    }

    @Test
    void aFailedJournalRefusesEveryAppendAndRollFromThenOn() throws IOException {
        Path journalDir = dir.resolve("journal");
        // every file rolls after its first batch: the next roll fails once the directory is gone
        FileJournal journal = new FileJournal(journalDir, new StorageConfig.Flush.PerBatch(), 1, 1, Map.of(), timer);
        try {
            journal.durable(journal.append(reset(1))).block(Duration.ofSeconds(10));
            // the writer may be opening the next file meanwhile (it rolls after each batch): delete until gone
            while (Files.exists(journalDir)) {
                try (Stream<Path> files = Files.walk(journalDir)) {
                    for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                } catch (DirectoryNotEmptyException | UncheckedIOException racing) {
                    // a file appeared after the walk: again
                }
            }
            // the writer's own roll after the first batch may find the directory gone and fail the journal first
            long appended;
            try {
                appended = journal.append(reset(2));
            } catch (IllegalStateException failedAlready) {
                assertThat(failedAlready).hasMessageContaining("failed");
                appended = journal.lastSequence();
            }
            long second = appended;
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (journal.failed().isEmpty() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(journal.failed()).hasValueSatisfying(why -> assertThat(why).contains(journalDir.toString())
                    .contains("failed"));
            assertThatThrownBy(() -> journal.append(reset(3))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("failed");
            assertThatThrownBy(journal::roll).isInstanceOf(IllegalStateException.class).hasMessageContaining("failed");
            assertThat(journal.lastSequence()).isEqualTo(second);
            assertThatThrownBy(() -> journal.durable(second + 1).block(Duration.ofSeconds(10)))
                    .hasMessageContaining("failed");
        } finally {
            journal.close();
        }
    }
}
