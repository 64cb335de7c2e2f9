package io.verbatim.model.entry;

/**
 * A per-thread array reused for bytes that live only during one call: a compressor's worst-case output
 * before the exact bytes are copied out, a read-only input copied for a library that needs an array, a
 * batch before it is compressed. Re-batching allocates no large array it throws away at once; an array
 * larger than {@link #RETAINED} is handed out but not kept, so a thread holds at most that much per scratch.
 * Each use gets its own instance: two uses of one call chain must never share one.
 */
final class Scratch {
    /** The largest array a thread keeps between calls. */
    static final int RETAINED = 4 << 20;

    private final ThreadLocal<byte[]> local = ThreadLocal.withInitial(() -> new byte[0]);

    /** An array of at least {@code size} bytes, its contents undefined; valid until this thread's next call. */
    byte[] atLeast(int size) {
        byte[] current = local.get();
        if (current.length >= size) {
            return current;
        }
        byte[] grown = new byte[Math.max(size, Math.min(RETAINED, current.length * 2))];
        if (grown.length <= RETAINED) {
            local.set(grown);
        }
        return grown;
    }
}
