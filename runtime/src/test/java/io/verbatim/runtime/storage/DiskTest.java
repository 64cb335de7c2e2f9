package io.verbatim.runtime.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file replaced whole: a reader finds one writer's content, whatever two writers do at once. */
class DiskTest {
    @TempDir
    Path dir;

    @Test
    void twoWritersReplacingOneFileAtOnceLeaveOneWholeContent() throws Exception {
        Path file = dir.resolve("state.pb");
        CountDownLatch halfWritten = new CountDownLatch(1);
        CountDownLatch otherDone = new CountDownLatch(1);
        byte[] a = new byte[1 << 16];
        Arrays.fill(a, (byte) 'a');
        byte[] b = new byte[1 << 16];
        Arrays.fill(b, (byte) 'b');
        CompletableFuture<Void> slow = CompletableFuture.runAsync(() -> Disk.replace(file, out -> {
            out.write(a, 0, a.length / 2);
            out.flush();
            halfWritten.countDown();
            try {
                otherDone.await(10, TimeUnit.SECONDS); // a checkpoint slowed down while a clean stop writes
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            out.write(a, a.length / 2, a.length / 2);
        }));
        assertThat(halfWritten.await(10, TimeUnit.SECONDS)).isTrue();
        Disk.replace(file, out -> out.write(b));
        otherDone.countDown();
        slow.get(10, TimeUnit.SECONDS);
        byte[] kept = Files.readAllBytes(file);
        assertThat(kept).satisfiesAnyOf(k -> assertThat(k).isEqualTo(a), k -> assertThat(k).isEqualTo(b));
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left).containsExactly(file);
        }
    }
}
