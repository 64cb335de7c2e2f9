package io.verbatim.runtime.storage;

import com.google.protobuf.CodedOutputStream;
import io.verbatim.config.StorageConfig;
import io.verbatim.embedded.Journal;
import io.verbatim.runtime.proto.JournalRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.NonBlocking;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The embedded storage's journal in a data directory: records appended by every topic of the node go, in
 * sequence order, to files {@code journal-<first sequence>.log}, each record framed as {@code [u32 length]
 * [u32 CRC32C][bytes]}. One writer thread takes whatever records have queued up, writes them in one go and,
 * under {@link StorageConfig.Flush.PerBatch}, forces them to disk before any of them counts as durable (group
 * commit: one force covers every record that arrived while the last one ran). Waiters and listeners are told
 * on a thread of their own, in order, so the writer never runs the work an acknowledgement starts.
 *
 * <p>A failed write or force fails the journal for good: every waiter, present and future, gets the error and
 * nothing is acknowledged again until the node restarts (what was written stays as the recovery finds it).
 */
final class FileJournal implements Journal, AutoCloseable {
    static final String PREFIX = "journal-";
    static final String SUFFIX = ".log";
    private static final Logger LOG = Loggers.getLogger(FileJournal.class);
    private static final int BUFFER_BYTES = 1 << 20;

    private final Path dir;
    private final StorageConfig.Flush flush;
    private final long rollBytes;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}. */
    private final ArrayDeque<Queued> queue = new ArrayDeque<>();
    /** Guarded by {@link #lock}: by sequence number, those waiting for it to be durable. */
    private final TreeMap<Long, List<Sinks.Empty<Void>>> waiters = new TreeMap<>();
    private final List<LongConsumer> listeners = new CopyOnWriteArrayList<>();
    /** Guarded by {@link #lock}: every file, by the sequence number of its first record. */
    private final TreeMap<Long, Path> files = new TreeMap<>();
    private final Thread writer;
    private final ExecutorService notifier;
    private final ExecutorService changes;
    private final @Nullable Disposable forcer;
    private long lastSequence;
    private volatile long durable;
    private volatile @Nullable Throwable failed;
    private boolean forceRequested;
    private @Nullable CompletableFuture<Long> rollRequested;
    private boolean closing;
    private long bytesWritten;
    /** Plain counters, shown by {@link LocalStorage#bindTo}. */
    private final AtomicLong forces = new AtomicLong();
    private final AtomicLong forceNanos = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();
    /** Owned by the writer thread. */
    private FileChannel channel;
    private long fileBytes;
    private ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
    private final CRC32C crc = new CRC32C();

    private record Queued(long sequence, Journal.Record record) {
    }

    /**
     * Opens a new file in {@code dir} whose first record will be {@code nextSequence}; older files stay (what the
     * recovery read) until a checkpoint deletes them.
     *
     * @param existing the files already in {@code dir}, by their first sequence number
     * @param rollBytes a file past this size is closed and the next record starts a new one
     * @param timer what forces the journal every interval under {@link StorageConfig.Flush.Every}
     */
    FileJournal(Path dir, StorageConfig.Flush flush, long rollBytes, long nextSequence, Map<Long, Path> existing,
            Scheduler timer) {
        this.dir = dir;
        this.flush = flush;
        this.rollBytes = rollBytes;
        this.lastSequence = nextSequence - 1;
        this.durable = nextSequence - 1;
        this.files.putAll(existing);
        try {
            Files.createDirectories(dir);
            this.channel = open(nextSequence);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a journal file in " + dir + ": " + e.getMessage(), e);
        }
        // the notifier never blocks (Reactor refuses a block() there) and never runs readers: those go to changes
        this.notifier = Executors.newSingleThreadExecutor(r -> new NotifierThread(r));
        this.changes = Executors.newSingleThreadExecutor(r -> daemon(r, "verbatim-journal-changes"));
        this.writer = daemon(this::writeLoop, "verbatim-journal");
        this.forcer = flush instanceof StorageConfig.Flush.Every every ? timer.schedulePeriodically(this::requestForce,
                every.interval().toNanos(), every.interval().toNanos(), TimeUnit.NANOSECONDS) : null;
        writer.start();
    }

    /** The thread that tells waiters and listeners: Reactor's blocking calls refuse to run on it. */
    private static final class NotifierThread extends Thread implements NonBlocking {
        NotifierThread(Runnable r) {
            super(r, "verbatim-journal-notify");
            setDaemon(true);
        }
    }

    @Override
    public Executor changes() {
        return command -> {
            try {
                changes.execute(command);
            } catch (RejectedExecutionException closed) {
                // the journal closed: nothing is read from it any more
            }
        };
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    static Path file(Path dir, long firstSequence) {
        return dir.resolve(PREFIX + String.format("%020d", firstSequence) + SUFFIX);
    }

    private FileChannel open(long firstSequence) throws IOException {
        Path path = file(dir, firstSequence);
        FileChannel c = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        Disk.forceDirectory(dir); // the new file's name survives a crash of the machine
        synchronized (lock) {
            files.put(firstSequence, path);
        }
        fileBytes = 0;
        return c;
    }

    @Override
    public long append(Journal.Record record) {
        synchronized (lock) {
            Throwable f = failed;
            if (f != null) {
                throw failure(f);
            }
            if (closing) {
                throw new IllegalStateException("the journal in " + dir + " is closed");
            }
            long sequence = ++lastSequence;
            queue.add(new Queued(sequence, record));
            if (queue.size() == 1) {
                lock.notifyAll();
            }
            return sequence;
        }
    }

    @Override
    public Mono<Void> durable(long sequence) {
        if (sequence <= durable) {
            return Mono.empty();
        }
        Sinks.Empty<Void> sink = Sinks.empty();
        synchronized (lock) {
            Throwable f = failed;
            if (f != null) {
                return Mono.error(failure(f));
            }
            if (sequence <= durable) {
                return Mono.empty();
            }
            waiters.computeIfAbsent(sequence, s -> new ArrayList<>(1)).add(sink);
        }
        return sink.asMono();
    }

    @Override
    public long lastSequence() {
        synchronized (lock) {
            return lastSequence;
        }
    }

    @Override
    public void onDurable(LongConsumer listener) {
        listeners.add(listener);
    }

    @Override
    public boolean keeps() {
        return true;
    }

    @Override
    public Optional<String> failed() {
        Throwable f = failed;
        return f == null ? Optional.empty() : Optional.of(String.valueOf(failure(f).getMessage()));
    }

    /** The highest sequence number that is durable. */
    long durableSequence() {
        return durable;
    }

    /** Bytes written since it was opened (what a checkpoint policy counts). */
    long bytesWritten() {
        synchronized (lock) {
            return bytesWritten;
        }
    }

    /** How many times the journal was forced to disk, and how long that took in all (ns). */
    long forces() {
        return forces.get();
    }

    long forceNanos() {
        return forceNanos.get();
    }

    /** How many batches of records were written (one group commit each). */
    long batches() {
        return batches.get();
    }

    /** The error the journal failed with, if it did. */
    Optional<Throwable> failure() {
        return Optional.ofNullable(failed);
    }

    /**
     * Closes the file being written and starts a new one; returns the new file's first sequence number: every
     * record below it is in an older file. Waits for the writer.
     */
    long roll() {
        CompletableFuture<Long> done = new CompletableFuture<>();
        synchronized (lock) {
            Throwable f = failed;
            if (f != null) {
                throw failure(f); // the writer is gone: nothing would ever answer
            }
            if (closing) {
                throw new IllegalStateException("the journal in " + dir + " is closed");
            }
            rollRequested = done;
            lock.notifyAll();
        }
        return done.join();
    }

    /** Deletes every file all of whose records are below {@code sequence} (a checkpoint holds them). */
    void deleteBefore(long sequence) {
        List<Path> gone = new ArrayList<>();
        synchronized (lock) {
            while (files.size() > 1 && files.firstKey() < sequence) {
                Map.Entry<Long, Path> first = files.firstEntry();
                Long next = files.higherKey(first.getKey());
                if (next == null || next > sequence) {
                    break; // its last records may be at or above sequence
                }
                gone.add(files.pollFirstEntry().getValue());
            }
        }
        for (Path p : gone) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                LOG.warn("cannot delete the old journal file {}: {}", p, e.toString());
            }
        }
    }

    private void requestForce() {
        synchronized (lock) {
            forceRequested = true;
            lock.notifyAll();
        }
    }

    private void writeLoop() {
        List<Queued> batch = new ArrayList<>();
        while (true) {
            boolean force;
            CompletableFuture<Long> roll;
            boolean stop;
            synchronized (lock) {
                while (queue.isEmpty() && !forceRequested && rollRequested == null && !closing) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                batch.addAll(queue);
                queue.clear();
                force = forceRequested;
                forceRequested = false;
                roll = rollRequested;
                rollRequested = null;
                stop = closing;
            }
            try {
                if (!batch.isEmpty()) {
                    write(batch);
                }
                boolean perBatch = flush instanceof StorageConfig.Flush.PerBatch;
                if ((perBatch && !batch.isEmpty()) || force || (stop && !(flush instanceof StorageConfig.Flush.Never))) {
                    long start = System.nanoTime();
                    channel.force(false);
                    forceNanos.addAndGet(System.nanoTime() - start);
                    forces.incrementAndGet();
                }
                if (!batch.isEmpty()) {
                    batches.incrementAndGet();
                }
                if (!batch.isEmpty()) {
                    durableUpTo(batch.get(batch.size() - 1).sequence());
                }
                batch.clear();
                if (roll != null || fileBytes >= rollBytes) {
                    long next = rolled();
                    if (roll != null) {
                        roll.complete(next);
                    }
                }
            } catch (IOException | RuntimeException e) {
                fail(e);
                if (roll != null) {
                    roll.completeExceptionally(e);
                }
                return;
            }
            if (stop) {
                synchronized (lock) {
                    if (queue.isEmpty()) {
                        return;
                    }
                }
            }
        }
    }

    /** Starts the next file (the current one forced first); its first sequence number. */
    private long rolled() throws IOException {
        long next;
        synchronized (lock) {
            next = durable + 1;
        }
        channel.force(false);
        channel.close();
        channel = open(next);
        return next;
    }

    private void write(List<Queued> batch) throws IOException {
        long written = 0;
        for (Queued q : batch) {
            JournalRecord r = JournalCodec.toProto(q.sequence(), q.record());
            int size = r.getSerializedSize();
            if (buffer.remaining() < size + 8) {
                drain();
                if (buffer.capacity() < size + 8) {
                    buffer = ByteBuffer.allocate(size + 8);
                }
            }
            int at = buffer.position();
            buffer.position(at + 8);
            CodedOutputStream out = CodedOutputStream.newInstance(buffer);
            r.writeTo(out);
            out.flush();
            crc.reset();
            crc.update(buffer.duplicate().position(at + 8).limit(at + 8 + size));
            buffer.putInt(at, size);
            buffer.putInt(at + 4, (int) crc.getValue());
            written += size + 8;
        }
        drain();
        if (buffer.capacity() > BUFFER_BYTES) {
            buffer = ByteBuffer.allocate(BUFFER_BYTES); // an outsized record's buffer is not kept
        }
        fileBytes += written;
        synchronized (lock) {
            bytesWritten += written;
        }
    }

    private void drain() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
        buffer.clear();
    }

    private void durableUpTo(long sequence) {
        List<Sinks.Empty<Void>> done = new ArrayList<>();
        synchronized (lock) {
            durable = sequence;
            Map<Long, List<Sinks.Empty<Void>>> due = waiters.headMap(sequence, true);
            due.values().forEach(done::addAll);
            due.clear();
        }
        notifier.execute(() -> {
            for (LongConsumer l : listeners) {
                l.accept(sequence);
            }
            done.forEach(Sinks.Empty::tryEmitEmpty);
        });
    }

    private void fail(Throwable e) {
        LOG.error("the journal in {} failed: nothing is acknowledged until the node restarts ({})", dir, e.toString());
        List<Sinks.Empty<Void>> waiting = new ArrayList<>();
        CompletableFuture<Long> roll;
        synchronized (lock) {
            failed = e;
            waiters.values().forEach(waiting::addAll);
            waiters.clear();
            roll = rollRequested; // asked for while the failing batch was written: nothing else would answer it
            rollRequested = null;
        }
        RuntimeException error = failure(e);
        if (roll != null) {
            roll.completeExceptionally(error);
        }
        notifier.execute(() -> waiting.forEach(s -> s.tryEmitError(error)));
    }

    private RuntimeException failure(Throwable e) {
        return new IllegalStateException("the journal in " + dir + " failed (" + e.getMessage()
                + "): nothing is acknowledged until the node restarts", e);
    }

    /** Writes and forces what is queued, then closes the file. */
    @Override
    public void close() {
        synchronized (lock) {
            if (closing) {
                return;
            }
            closing = true;
            lock.notifyAll();
        }
        if (forcer != null) {
            forcer.dispose();
        }
        try {
            writer.join(TimeUnit.MINUTES.toMillis(1));
            channel.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            LOG.warn("closing the journal file in {}: {}", dir, e.toString());
        }
        notifier.shutdown();
        try {
            notifier.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        changes.shutdown();
    }
}
