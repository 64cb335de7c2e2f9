package io.verbatim.runtime.storage;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.config.StorageConfig;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.embedded.Journal;
import io.verbatim.embedded.LedgerIds;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.runtime.storage.JournalCodec.Sequenced;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A node's embedded storage: its topics' segments in this process's memory, kept in its data directory or
 * nowhere. With a data directory, every change a topic's storage makes goes to a journal ({@link FileJournal}),
 * and is acknowledged only once the journal made it durable; now and then (and at a clean stop) a checkpoint
 * writes every topic's image to {@code state.pb} and the journal before it is deleted. A start recovers each
 * topic from the checkpoint and the journal after it, whether the node stopped cleanly or was killed.
 *
 * <p>Ledger ids are one counter per node, above every id the data directory knows of and above the clock's
 * milliseconds since 2020: so a segment reopened after any restart, kept data or not, never hands out a
 * position it handed out before (a memory-only node relies on the clock alone: its ledgers are numbered from
 * the time it started, one per segment opened).
 */
public final class LocalStorage implements AutoCloseable {
    static final String STATE = "state.pb";
    static final String RUNNING = "running";
    static final String JOURNAL = "journal";
    static final String LOCK = "lock";
    /** Ledger ids count from the clock's milliseconds since this moment. */
    static final Instant LEDGER_EPOCH = Instant.parse("2020-01-01T00:00:00Z");
    /** Ledger ids a millisecond of the clock floor stands for: 2^10 ({@link #clockFloor}). */
    static final int LEDGERS_PER_MS_BITS = 10;
    private static final Logger LOG = Loggers.getLogger(LocalStorage.class);
    /** A journal file past this size is closed and the next record starts a new one. */
    private static final long ROLL_BYTES = 16 << 20;

    private final String cluster;
    private final Scheduler timer;
    private final @Nullable Path dir;
    private final @Nullable FileJournal journal;
    private final LedgerIds.Counter ledgers;
    private final long checkpointBytes;
    private final Map<String, Recovered> recovered;
    private final Map<String, MemorySegments> topics = new LinkedHashMap<>();
    private final ExecutorService checkpointer;
    private final AtomicBoolean checkpointing = new AtomicBoolean();
    private final boolean uncleanStop;
    private final String recovery;
    private volatile long checkpointedAtBytes;
    private final AtomicLong checkpoints = new AtomicLong();
    private volatile long lastCheckpointBytes;
    /** Guarded by this: every configured topic was opened, so a checkpoint may drop recovered topics still unopened. */
    private boolean configuredOpened;
    /** Held while the checkpoint is written: one writer at a time (a checkpoint, the clean stop's). */
    private final Object writing = new Object();
    /** Guarded by {@link #writing}: the journal closed (a stop); no checkpoint is taken any more. */
    private boolean closed;
    /** The data directory's lock, released as the storage closes. */
    private java.nio.channels.@Nullable FileLock lock;

    /** What a start recovered of a topic: its image and the journal's records written after it. */
    record Recovered(ClusterImage image, List<Journal.Record> records, boolean fromCheckpoint) {
    }

    private LocalStorage(String cluster, Scheduler timer, @Nullable Path dir, @Nullable FileJournal journal,
            LedgerIds.Counter ledgers, long checkpointBytes, Map<String, Recovered> recovered, boolean uncleanStop,
            String recovery) {
        this.cluster = cluster;
        this.timer = timer;
        this.dir = dir;
        this.journal = journal;
        this.ledgers = ledgers;
        this.checkpointBytes = checkpointBytes;
        this.recovered = new LinkedHashMap<>(recovered);
        this.uncleanStop = uncleanStop;
        this.recovery = recovery;
        this.checkpointer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "verbatim-checkpoint");
            t.setDaemon(true);
            return t;
        });
        if (journal != null) {
            journal.onDurable(s -> checkpointIfDue());
        }
    }

    /** Storage in memory only: a crash or a stop loses what it stored; ledgers numbered from the clock. */
    public static LocalStorage memoryOnly(String cluster, Scheduler timer) {
        return new LocalStorage(cluster, timer, null, null, LedgerIds.fromFloor(clockFloor(timer)), 0, Map.of(), false,
                "in memory only (no data directory): a crash or a stop loses what this cluster stores");
    }

    /**
     * Storage kept in {@code dir}: recovers what the last run kept (its checkpoint and the journal after it, a torn
     * tail cut off), then opens a journal for this run.
     *
     * @throws IllegalStateException naming the file when what is kept cannot be read
     */
    public static LocalStorage open(String cluster, Path dir, StorageConfig config, Scheduler timer) {
        java.nio.channels.FileLock lock = lock(dir);
        try {
            LocalStorage storage = open(cluster, dir, config, timer, lock);
            storage.markRunning();
            return storage;
        } catch (RuntimeException e) {
            release(lock);
            throw e;
        }
    }

    /**
     * Locks {@code dir} for this process ({@code <dir>/lock}, held until the storage closes): two nodes writing one
     * data directory would each cut and overwrite what the other keeps.
     *
     * @throws IllegalStateException naming the directory when another process holds it
     */
    private static java.nio.channels.FileLock lock(Path dir) {
        Path file = dir.resolve(LOCK);
        java.nio.channels.FileChannel channel = null;
        try {
            Files.createDirectories(dir);
            channel = java.nio.channels.FileChannel.open(file, StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
            java.nio.channels.FileLock lock = channel.tryLock();
            if (lock != null) {
                return lock;
            }
        } catch (OverlappingFileLockException held) {
            // this process holds it already
        } catch (IOException e) {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot lock the data directory " + dir + " (" + file + "): "
                    + e.getMessage(), e);
        }
        closeQuietly(channel);
        throw new IllegalStateException("the data directory " + dir + " is in use by another node (" + file
                + " is locked): one node per data directory");
    }

    private static void closeQuietly(java.nio.channels.@Nullable FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing was locked through it
            }
        }
    }

    private static void release(java.nio.channels.@Nullable FileLock lock) {
        if (lock != null) {
            closeQuietly(lock.channel()); // closing the channel releases the lock
        }
    }

    private static LocalStorage open(String cluster, Path dir, StorageConfig config, Scheduler timer,
            java.nio.channels.FileLock lock) {
        boolean unclean = Files.exists(dir.resolve(RUNNING));
        StateFormat.Checkpoint checkpoint = readCheckpoint(cluster, dir.resolve(STATE));
        Path journalDir = dir.resolve(JOURNAL);
        JournalFiles.Read read = JournalFiles.read(journalDir, checkpoint.nextJournalSequence());
        Map<String, Recovered> recovered = new LinkedHashMap<>();
        checkpoint.images().forEach((topic, image) -> recovered.put(topic, new Recovered(image, new ArrayList<>(), true)));
        long replayed = 0;
        for (Sequenced s : read.records()) {
            String topic = s.record().topic();
            if (s.sequence() <= checkpoint.journalSequences().getOrDefault(topic, 0L)) {
                continue; // the checkpoint holds it
            }
            Recovered r = recovered.get(topic);
            if (r == null) {
                if (!(s.record() instanceof Journal.Record.TopicCreated created)) {
                    throw new IllegalStateException("the journal in " + journalDir + " has record " + s.sequence()
                            + " of topic " + topic + ", which neither the checkpoint nor an earlier record creates");
                }
                recovered.put(topic, new Recovered(MemorySegments.createdImage(created), new ArrayList<>(), false));
                continue;
            }
            r.records().add(s.record());
            replayed++;
        }
        LedgerIds.Counter ledgers = LedgerIds.fromFloor(Math.max(clockFloor(timer), checkpoint.nextLedgerId()));
        recovered.values().forEach(r -> knownLedgers(r, ledgers));
        long maxTopicSequence = checkpoint.journalSequences().values().stream().mapToLong(Long::longValue).max()
                .orElse(0);
        long next = read.nextSequence(Math.max(1, Math.max(checkpoint.nextJournalSequence(), maxTopicSequence + 1)));
        FileJournal journal = new FileJournal(journalDir, config.flush(), Math.min(ROLL_BYTES, config.checkpointBytes()),
                next, read.files(), timer);
        String recovery = describe(dir, unclean, checkpoint, recovered, replayed, read, config.flush());
        LocalStorage storage = new LocalStorage(cluster, timer, dir, journal, ledgers, config.checkpointBytes(),
                recovered, unclean, recovery);
        storage.lock = lock;
        return storage;
    }

    private static StateFormat.Checkpoint readCheckpoint(String cluster, Path file) {
        if (!Files.exists(file)) {
            return new StateFormat.Checkpoint(Map.of(), Map.of(), 0, 0);
        }
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file))) {
            return StateFormat.readCheckpoint(in, cluster);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("the node state in " + file + " cannot be read (" + e.getMessage()
                    + "); move it away to start this cluster empty", e);
        }
    }

    private static void knownLedgers(Recovered r, LedgerIds.Counter ledgers) {
        r.image().segments().forEach(s -> s.ledgers().forEach(l -> ledgers.atLeast(l.ledgerId())));
        for (Journal.Record record : r.records()) {
            if (record instanceof Journal.Record.LedgerOpened l) {
                ledgers.atLeast(l.ledgerId());
            } else if (record instanceof Journal.Record.Adopted a) {
                a.ledgers().values().forEach(ledgers::atLeast);
            }
        }
    }

    private static String describe(Path dir, boolean unclean, StateFormat.Checkpoint checkpoint,
            Map<String, Recovered> recovered, long replayed, JournalFiles.Read read, StorageConfig.Flush flush) {
        String from = checkpoint.images().isEmpty() && read.records().isEmpty() ? "nothing kept yet"
                : checkpoint.images().size() + " topic(s) from the checkpoint and " + replayed + " journal record(s) "
                        + "after it" + (read.cut() > 0 ? " (a torn tail of " + read.cut() + " byte(s) cut off)" : "");
        return "kept in " + dir + " (journal flush: " + flush + "): "
                + (unclean ? "the previous run did not stop cleanly; " : "") + "recovered " + from
                + (recovered.isEmpty() ? "" : ", " + recovered.size() + " topic(s)");
    }

    /**
     * The lowest ledger id a start may hand out: 2^10 per millisecond since 2020, so a process restarted at once
     * after handing out ledgers faster than one a millisecond (thousands of topics made at start) is still above
     * every id the run before handed out, though it kept nothing (memory only, or a journal that lost its tail).
     */
    static long clockFloor(Scheduler timer) {
        return Math.max(0, timer.now(TimeUnit.MILLISECONDS) - LEDGER_EPOCH.toEpochMilli()) << LEDGERS_PER_MS_BITS;
    }

    /** What this storage is and what it recovered, for the node's start log. */
    public String describe() {
        return recovery;
    }

    /** Whether the run before did not stop cleanly (it was killed or crashed). */
    public boolean uncleanStop() {
        return uncleanStop;
    }

    /** Whether what is stored is kept in a data directory. */
    public boolean durable() {
        return journal != null;
    }

    /** Why the journal failed, if it did: nothing is acknowledged any more. */
    public Optional<String> failure() {
        return journal == null ? Optional.empty() : journal.failed();
    }

    /**
     * The storage of {@code topic}, starting from what was recovered of it (then brought to {@code held}, the
     * metadata log's layout, as any adoption would: segments created, sealed, pruned) or empty with
     * {@code held}. Logs what was kept.
     */
    public synchronized MemorySegments openTopic(String topic, Layout held) {
        Journal j = journal != null ? journal : Journal.NONE;
        Recovered r = recovered.remove(topic);
        MemorySegments c;
        if (r == null) {
            c = new MemorySegments(cluster, topic, held, timer, j, ledgers);
        } else {
            c = MemorySegments.restore(cluster, topic, r.image(), timer, j, ledgers);
            r.records().forEach(c::replay);
            c.reopen();
            report(topic, c, held);
        }
        topics.put(topic, c);
        return c;
    }

    private void report(String topic, MemorySegments c, Layout held) {
        Layout kept = c.layout();
        long entries = 0;
        for (Segment s : kept.segments().values()) {
            entries += c.findLog(s.id()).map(l -> l.size() - l.firstKept()).orElse(0L);
        }
        String what = cluster + ": " + topic + ": kept " + entries + " entries in " + kept.segments().size()
                + " segment(s) at epoch " + kept.epoch();
        if (held.epoch() > kept.epoch()) {
            c.adopt(held);
            LOG.info("{}; brought to the metadata log's epoch {} (segments now {})", what, held.epoch(),
                    c.layout().segments().keySet());
        } else if (held.epoch() < kept.epoch()) {
            LOG.info("{}, ahead of the metadata log's epoch {} here: kept, and later layouts are taken as they come",
                    what, held.epoch());
        } else if (!held.equals(kept)) {
            LOG.warn("{}, but the metadata log holds another layout at that epoch: kept what was stored", what);
        } else {
            LOG.info("{}", what);
        }
    }

    /** Adds {@code image} as what was recovered of {@code topic} (an embedder's restore; no journal after it). */
    public synchronized void offer(String topic, ClusterImage image) {
        recovered.put(topic, new Recovered(image, new ArrayList<>(), true));
        image.segments().forEach(s -> s.ledgers().forEach(l -> ledgers.atLeast(l.ledgerId())));
    }

    /** The layout {@code topic} was recovered at, if it was. */
    public synchronized Optional<Layout> recoveredLayout(String topic) {
        Recovered r = recovered.get(topic);
        if (r == null) {
            return Optional.empty();
        }
        Layout layout = r.image().layout();
        for (Journal.Record record : r.records()) {
            if (record instanceof Journal.Record.Adopted a && a.layout().epoch() > layout.epoch()) {
                layout = a.layout();
            }
        }
        return Optional.of(layout);
    }

    /** Topics recovered that no configured topic opened (after every configured topic was opened). */
    public synchronized List<String> unopened() {
        return List.copyOf(recovered.keySet());
    }

    /**
     * Says every configured topic was opened: from now on a checkpoint drops the recovered topics still unopened
     * (no configured topic keeps them). Before this, a checkpoint carries them over as they were recovered.
     */
    public synchronized void configuredTopicsOpened() {
        configuredOpened = true;
    }

    private void checkpointIfDue() {
        FileJournal j = journal;
        if (j == null || j.bytesWritten() - checkpointedAtBytes < Math.max(checkpointBytes, lastCheckpointBytes)
                || !checkpointing.compareAndSet(false, true)) {
            return;
        }
        try {
            checkpointer.execute(() -> {
                try {
                    checkpoint();
                } catch (RuntimeException e) {
                    LOG.warn("{}: a checkpoint failed (the journal is kept and replayed instead): {}", cluster,
                            e.toString());
                } finally {
                    checkpointing.set(false);
                }
            });
        } catch (RejectedExecutionException closed) {
            checkpointing.set(false);
        }
    }

    /**
     * Writes every topic's image to the checkpoint and deletes the journal files it makes moot: the journal starts
     * a new file, each topic's image is taken with the sequence number it holds records up to, the checkpoint
     * replaces the last one, then the files before the new one go.
     */
    void checkpoint() {
        synchronized (writing) {
            if (!closed) {
                checkpointNow();
            }
        }
    }

    private void checkpointNow() {
        FileJournal j = journal;
        Path d = dir;
        if (j == null || d == null) {
            return;
        }
        long bytes = j.bytesWritten();
        long first = j.roll();
        Map<String, ClusterImage> images = new LinkedHashMap<>();
        Map<String, Long> sequences = new LinkedHashMap<>();
        synchronized (this) { // a topic opened after this is created in the new file
            topics.forEach((topic, c) -> {
                MemorySegments.Checkpoint cp = c.checkpoint();
                images.put(topic, cp.image());
                sequences.put(topic, cp.sequence());
            });
            if (!configuredOpened) {
                carryUnopened(images, sequences, first - 1);
            }
        }
        // durable before the checkpoint names it: a start after a crash then finds the journal up to there
        long upTo = j.lastSequence();
        j.durable(upTo).block();
        write(d, new StateFormat.Checkpoint(images, sequences, ledgers.peek(), upTo + 1));
        j.deleteBefore(first);
        checkpointedAtBytes = bytes;
        checkpoints.incrementAndGet();
    }

    /**
     * Adds each topic recovered and not yet opened to a checkpoint as it was recovered (its image with the journal's
     * records after it applied), since the journal files holding those records are deleted after the checkpoint.
     * The folded image then stands for it, should it be opened later. Under this storage's lock.
     */
    private void carryUnopened(Map<String, ClusterImage> images, Map<String, Long> sequences, long upTo) {
        for (Map.Entry<String, Recovered> e : recovered.entrySet()) {
            Recovered r = e.getValue();
            ClusterImage image = r.image();
            if (!r.records().isEmpty()) {
                MemorySegments folded = MemorySegments.restore(cluster, e.getKey(), image, timer);
                r.records().forEach(folded::replay);
                image = folded.image();
                e.setValue(new Recovered(image, new ArrayList<>(), r.fromCheckpoint()));
            }
            images.put(e.getKey(), image);
            sequences.put(e.getKey(), upTo); // every record of a topic not opened was written by an earlier run
        }
    }

    private void write(Path d, StateFormat.Checkpoint checkpoint) {
        Path file = d.resolve(STATE);
        Disk.replace(file, out -> StateFormat.write(out, cluster, checkpoint, timer.now(TimeUnit.MILLISECONDS)));
        try {
            lastCheckpointBytes = Files.size(file);
        } catch (IOException e) {
            lastCheckpointBytes = 0;
        }
    }

    private void markRunning() {
        Path d = dir;
        if (d == null) {
            return;
        }
        try {
            Files.createDirectories(d);
            Files.writeString(d.resolve(RUNNING), Long.toString(ProcessHandle.current().pid()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write in the data directory " + d + ": " + e.getMessage(), e);
        }
    }

    /**
     * Shows the journal to Micrometer ({@code verbatim.storage.*}): records and bytes written, batches (group
     * commits) and forces with their time, records not yet durable, checkpoints, and whether the journal failed.
     */
    public void bindTo(MeterRegistry registry) {
        FileJournal j = journal;
        if (j == null) {
            return;
        }
        FunctionCounter.builder("verbatim.storage.journal.records", j,
                FileJournal::lastSequence).description("records appended to the journal (sequence numbers)")
                .register(registry);
        FunctionCounter.builder("verbatim.storage.journal.bytes", j,
                FileJournal::bytesWritten).baseUnit("bytes").description("bytes written to the journal since the start")
                .register(registry);
        FunctionCounter.builder("verbatim.storage.journal.batches", j, FileJournal::batches)
                .description("batches of records written at once (one group commit each)").register(registry);
        FunctionCounter.builder("verbatim.storage.journal.forces", j, FileJournal::forces)
                .description("times the journal was forced to disk").register(registry);
        FunctionCounter.builder("verbatim.storage.journal.force.seconds", j,
                f -> f.forceNanos() / 1e9).baseUnit("seconds").description("time spent forcing the journal to disk")
                .register(registry);
        Gauge.builder("verbatim.storage.journal.pending", j,
                f -> f.lastSequence() - f.durableSequence()).description("records appended and not yet durable")
                .register(registry);
        Gauge.builder("verbatim.storage.journal.failed", j,
                f -> f.failure().isPresent() ? 1 : 0).description("1 once the journal failed: nothing is acknowledged")
                .register(registry);
        FunctionCounter.builder("verbatim.storage.checkpoints", checkpoints,
                AtomicLong::get).description("checkpoints written while running")
                .register(registry);
    }

    /** The state file, for the stop log. */
    public Optional<Path> stateFile() {
        return Optional.ofNullable(dir).map(d -> d.resolve(STATE));
    }

    /**
     * A clean stop: {@code images} (every topic stopped, storing nothing more) written to the checkpoint, the
     * journal deleted, the running marker removed. The next start begins from the checkpoint alone.
     */
    public void stopCleanly(Map<String, ClusterImage> images) {
        shutdownCheckpointer();
        synchronized (writing) { // after a checkpoint still being written, never at the same time
            closed = true;
            stopNow(images);
        }
    }

    private void stopNow(Map<String, ClusterImage> images) {
        FileJournal j = journal;
        Path d = dir;
        if (j == null || d == null) {
            return;
        }
        j.close();
        long last = j.lastSequence();
        Map<String, ClusterImage> all = new LinkedHashMap<>(images);
        Map<String, Long> sequences = new LinkedHashMap<>();
        images.keySet().forEach(t -> sequences.put(t, last));
        synchronized (this) {
            if (!configuredOpened) {
                carryUnopened(all, sequences, last);
            }
        }
        write(d, new StateFormat.Checkpoint(all, sequences, ledgers.peek(), last + 1));
        try (Stream<Path> files = Files.list(d.resolve(JOURNAL))) {
            for (Path p : files.toList()) {
                Files.deleteIfExists(p);
            }
            Files.deleteIfExists(d.resolve(RUNNING));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot finish the clean stop in " + d + ": " + e.getMessage(), e);
        } finally {
            release(lock);
        }
    }

    private void shutdownCheckpointer() {
        checkpointer.shutdown();
        try {
            checkpointer.awaitTermination(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes the journal as it is (the next start replays it): not a clean stop. */
    @Override
    public void close() {
        shutdownCheckpointer();
        synchronized (writing) {
            closed = true;
        }
        if (journal != null) {
            journal.close();
        }
        release(lock);
    }
}
