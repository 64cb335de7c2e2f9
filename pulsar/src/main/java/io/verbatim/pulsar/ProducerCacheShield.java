package io.verbatim.pulsar;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.pulsar.reactive.client.adapter.ProducerCacheProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reactive client's producer cache, one entry per producer, where no caller can break an entry for the others.
 *
 * <p>The client's own cache (0.7.0, without Caffeine) hands every caller the one future that makes the producer, and
 * a caller that cancels (an HTTP client that reset its produce call) cancels that future: it stays in the cache
 * cancelled, and every later send on the topic fails with a {@code CancellationException}, until a restart. Here each
 * caller gets its own copy of the entry, so a cancellation ends only that caller's wait and the producer is still
 * made for the others; and an entry whose making failed (a broker away, say) is forgotten, so the next call makes it
 * again rather than be answered that failure for good.
 */
final class ProducerCacheShield implements ProducerCacheProvider {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerCacheShield.class);

    private final String what;
    private final Map<Object, CompletableFuture<?>> entries = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** {@code what}: whose producers these are, for errors and the log. */
    ProducerCacheShield(String what) {
        this.what = what;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, V> CompletableFuture<V> getOrCreateCachedEntry(K key, Function<K, CompletableFuture<V>> create) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the producers of " + what
                    + " are closed"));
        }
        Object[] made = new Object[1];
        CompletableFuture<V> entry = (CompletableFuture<V>) entries.computeIfAbsent(key, k -> {
            CompletableFuture<V> f = create.apply(key);
            made[0] = f;
            return f;
        });
        if (entry == made[0]) {
            // outside computeIfAbsent: an entry that failed already is removed at once
            entry.whenComplete((value, error) -> {
                if (error != null) {
                    entries.remove(key, entry);
                }
            });
        }
        if (closed) { // closed meanwhile, maybe after it looked at the entries
            entries.remove(key, entry);
            entry.thenAccept(this::closeEntry);
        }
        return entry.copy();
    }

    /** Closes every entry, those still being made once they are. */
    @Override
    public void close() {
        closed = true;
        for (CompletableFuture<?> entry : entries.values()) {
            entry.thenAccept(this::closeEntry);
        }
        entries.clear();
    }

    private void closeEntry(Object value) {
        if (value instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("closing a producer of {}: {}", what, String.valueOf(e.getMessage()));
            }
        }
    }
}
