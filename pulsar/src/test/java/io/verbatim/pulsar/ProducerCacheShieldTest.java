package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The producer cache: no caller breaks an entry for the others, a failed one is made again, close closes all. */
class ProducerCacheShieldTest {
    private final ProducerCacheShield cache = new ProducerCacheShield("orders");
    private final AtomicInteger made = new AtomicInteger();

    private CompletableFuture<Resource> get(String key, CompletableFuture<Resource> making) {
        return cache.getOrCreateCachedEntry(key, k -> {
            made.incrementAndGet();
            return making;
        });
    }

    @Test
    void aCallerCancellingItsWaitLeavesTheEntryBeingMadeForTheOthers() {
        CompletableFuture<Resource> making = new CompletableFuture<>();
        get("a", making).cancel(false);
        assertThat(making).as("the making itself").isNotCancelled();

        CompletableFuture<Resource> later = get("a", new CompletableFuture<>());
        Resource r = new Resource();
        making.complete(r);
        assertThat(later).isCompletedWithValue(r);
        assertThat(made).as("made once").hasValue(1);
    }

    @Test
    void anEntryWhoseMakingFailedIsMadeAgainByTheNextCaller() {
        CompletableFuture<Resource> failing = new CompletableFuture<>();
        CompletableFuture<Resource> first = get("a", failing);
        failing.completeExceptionally(new IllegalStateException("broker away"));
        assertThat(first).isCompletedExceptionally();

        Resource r = new Resource();
        assertThat(get("a", CompletableFuture.completedFuture(r))).isCompletedWithValue(r);
        assertThat(get("a", new CompletableFuture<>())).as("kept once made").isCompletedWithValue(r);
        assertThat(made).hasValue(2);
    }

    @Test
    void anEntryThatFailedAtOnceIsNotKept() {
        get("a", CompletableFuture.failedFuture(new IllegalStateException("refused")));
        Resource r = new Resource();
        assertThat(get("a", CompletableFuture.completedFuture(r))).isCompletedWithValue(r);
    }

    @Test
    void closeClosesEveryEntryThoseStillBeingMadeOnceTheyAreAndRefusesNewOnes() {
        Resource made = new Resource();
        get("a", CompletableFuture.completedFuture(made));
        CompletableFuture<Resource> making = new CompletableFuture<>();
        get("b", making);
        cache.close();
        assertThat(made.closed).hasValue(1);

        Resource late = new Resource();
        making.complete(late);
        assertThat(late.closed).hasValue(1);
        assertThat(get("c", new CompletableFuture<>())).isCompletedExceptionally()
                .failsWithin(java.time.Duration.ZERO)
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withMessageContaining("the producers of orders are closed");
    }

    private static final class Resource implements AutoCloseable {
        final AtomicInteger closed = new AtomicInteger();

        @Override
        public void close() {
            closed.incrementAndGet();
        }
    }
}
