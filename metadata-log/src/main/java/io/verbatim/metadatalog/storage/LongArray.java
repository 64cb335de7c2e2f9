package io.verbatim.metadatalog.storage;

import java.util.Arrays;

/** A growable array of longs: a segment's offsets and terms without boxing. */
final class LongArray {
    private long[] values = new long[16];
    private int size;

    void add(long value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    long get(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("index " + i + " of " + size);
        }
        return values[i];
    }

    int size() {
        return size;
    }

    void truncate(int newSize) {
        if (newSize < 0 || newSize > size) {
            throw new IndexOutOfBoundsException("truncate to " + newSize + " of " + size);
        }
        size = newSize;
    }
}
