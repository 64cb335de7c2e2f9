package io.verbatim.metadatalog.storage;

import static io.verbatim.metadatalog.storage.Entries.entry;

import io.verbatim.metadatalog.proto.LogEntryProto;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prints how many append+sync rounds per second this machine's disk takes for 200-byte entries, one entry
 * per sync (a Ready batch of one: the worst case) and 16 per sync, with and without the commit index
 * changing every round. Measures, never asserts, and only with {@code -Dverbatim.measure=true} (kept out of
 * the test run's time); {@code -Dverbatim.syncRounds=N} (default 100).
 */
@EnabledIfSystemProperty(named = "verbatim.measure", matches = "true")
class StorageSyncRateTest {
    @TempDir
    Path dir;

    @Test
    void printsAppendSyncRate() {
        int rounds = Integer.getInteger("verbatim.syncRounds", 100);
        for (int perSync : new int[] {1, 16}) {
            for (boolean hardState : new boolean[] {false, true}) {
                measure(rounds, perSync, hardState);
            }
        }
    }

    private void measure(int rounds, int perSync, boolean hardState) {
        Path log = dir.resolve("log-" + perSync + "-" + hardState);
        try (SegmentedRaftStorage s = SegmentedRaftStorage.open(log, StorageOptions.defaults())) {
            long index = 1;
            int payload = 200 - entry(1, 1, 0).getSerializedSize() - 3;
            long start = System.nanoTime();
            for (int r = 0; r < rounds; r++) {
                LogEntryProto[] batch = new LogEntryProto[perSync];
                for (int i = 0; i < perSync; i++) {
                    batch[i] = entry(1, index++, payload);
                }
                s.append(List.of(batch));
                if (hardState) {
                    s.saveHardState(Entries.hardState(1, "m1", index - 1));
                }
                s.sync();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            StorageMetrics m = s.metrics();
            System.out.printf("storage sync rate: %d-byte entries, %2d per sync, commit changes %-5s: %7.0f syncs/s, "
                    + "%8.0f entries/s, mean sync %.3f ms, %d fsyncs%n", batch0Size(payload), perSync, hardState,
                    rounds / seconds, rounds * perSync / seconds, m.syncNanos() / 1e6 / m.syncs(), m.fsyncs());
        }
    }

    private static int batch0Size(int payload) {
        return entry(1, 1000, payload).getSerializedSize();
    }
}
