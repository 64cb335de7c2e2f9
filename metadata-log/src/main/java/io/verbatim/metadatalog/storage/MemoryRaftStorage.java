package io.verbatim.metadatalog.storage;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * {@link RaftStorage} in memory, for tests and the simulator, with a disk's crash semantics: it keeps what
 * was synced apart from what was only written, and {@link #crash()} returns a new storage holding only the
 * former. {@link #crash(RandomGenerator)} also keeps a random prefix of the unsynced writes (a partial
 * append included), as a disk may have written some of them before the crash.
 *
 * <p>A crash keeps the state after some prefix of the operations since the last sync, never a mix: a
 * replaced suffix comes back only if its replacement is lost with it. {@code saveSnapshot} syncs first and
 * is durable at once, as on disk; {@code close} syncs.
 */
final class MemoryRaftStorage implements RaftStorage {
    private final Log durable;
    private final Log current;
    private final List<Object> unsynced = new ArrayList<>();
    private boolean closed;

    /** An empty storage: a member that never wrote anything. */
    public MemoryRaftStorage() {
        this(new Log());
    }

    private MemoryRaftStorage(Log survived) {
        this.durable = survived;
        this.current = survived.copy();
    }

    /** What a crash now would leave: only what was synced. Works on a closed storage too (a restart). */
    public MemoryRaftStorage crash() {
        return new MemoryRaftStorage(durable.copy());
    }

    /**
     * What a crash now might leave when some unsynced writes reached the disk: what was synced plus a
     * prefix of the writes since, drawn from {@code random}, possibly ending inside an append.
     */
    public MemoryRaftStorage crash(RandomGenerator random) {
        Log survived = durable.copy();
        int kept = random.nextInt(unsynced.size() + 1);
        for (int i = 0; i < kept; i++) {
            survived.apply(unsynced.get(i));
        }
        if (kept < unsynced.size() && unsynced.get(kept) instanceof Append torn) {
            survived.apply(new Append(torn.cut(), torn.entries().subList(0, random.nextInt(torn.entries().size() + 1))));
        }
        return new MemoryRaftStorage(survived);
    }

    @Override
    public Recovered recover() {
        checkOpen();
        return new Recovered(Optional.ofNullable(current.snapshot), current.hardState, current.entries);
    }

    @Override
    public void append(List<LogEntryProto> entries) {
        checkOpen();
        if (entries.isEmpty()) {
            return;
        }
        int same = Appends.check(entries, current.snapshotIndex(), current.lastIndex(), current::termAt);
        Append op = new Append(entries.get(0).getIndex() + same, List.copyOf(entries.subList(same, entries.size())));
        if (op.cut() <= current.lastIndex() || !op.entries().isEmpty()) {
            current.apply(op);
            unsynced.add(op);
        }
    }

    @Override
    public void saveHardState(HardStateProto state) {
        checkOpen();
        current.apply(state);
        unsynced.add(state);
    }

    @Override
    public void sync() {
        checkOpen();
        for (Object op : unsynced) {
            durable.apply(op);
        }
        unsynced.clear();
    }

    @Override
    public void saveSnapshot(SnapshotMetaProto meta, ByteString data) {
        checkOpen();
        long index = meta.getLastIncluded().getIndex();
        if (index < 1 || index <= current.snapshotIndex()) {
            throw new IllegalArgumentException("snapshot at index " + index + " is not after the stored one at "
                    + current.snapshotIndex());
        }
        sync();
        current.install(meta, data);
        durable.install(meta, data);
    }

    @Override
    public Optional<ByteString> snapshotData() {
        checkOpen();
        return Optional.ofNullable(current.snapshotData);
    }

    @Override
    public List<LogEntryProto> read(long fromIndex, long toIndexExclusive, long maxBytes) {
        checkOpen();
        if (fromIndex <= current.snapshotIndex()) {
            throw new IllegalArgumentException("entry " + fromIndex + " is compacted: the snapshot ends at "
                    + current.snapshotIndex());
        }
        List<LogEntryProto> out = new ArrayList<>();
        long bytes = 0;
        for (long i = fromIndex; i < Math.min(toIndexExclusive, current.lastIndex() + 1); i++) {
            LogEntryProto e = current.entry(i);
            bytes += Records.HEADER_BYTES + e.getSerializedSize();
            if (!out.isEmpty() && bytes > maxBytes) {
                break;
            }
            out.add(e);
        }
        return out;
    }

    /** Syncs, as a clean shutdown does; {@link #crash()} then gives the restarted storage. */
    @Override
    public void close() {
        if (!closed) {
            sync();
            closed = true;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("storage is closed");
        }
    }

    /** Cut the log at {@code cut} (if it holds entries there) and append {@code entries}. */
    private record Append(long cut, List<LogEntryProto> entries) {
    }

    /** One copy of the state: the durable one or the current one. */
    private static final class Log {
        @Nullable SnapshotMetaProto snapshot;
        @Nullable ByteString snapshotData;
        HardStateProto hardState = HardStateProto.getDefaultInstance();
        final ArrayList<LogEntryProto> entries = new ArrayList<>();

        Log copy() {
            Log c = new Log();
            c.snapshot = snapshot;
            c.snapshotData = snapshotData;
            c.hardState = hardState;
            c.entries.addAll(entries);
            return c;
        }

        long snapshotIndex() {
            return snapshot == null ? 0 : snapshot.getLastIncluded().getIndex();
        }

        long lastIndex() {
            return snapshotIndex() + entries.size();
        }

        LogEntryProto entry(long index) {
            return entries.get(Math.toIntExact(index - snapshotIndex() - 1));
        }

        long termAt(long index) {
            if (index == snapshotIndex()) {
                return snapshot == null ? 0 : snapshot.getLastIncluded().getTerm();
            }
            return entry(index).getTerm();
        }

        void apply(Object op) {
            if (op instanceof HardStateProto state) {
                hardState = state;
            } else if (op instanceof Append append) {
                if (append.cut() <= lastIndex()) {
                    entries.subList(Math.toIntExact(append.cut() - snapshotIndex() - 1), entries.size()).clear();
                }
                entries.addAll(append.entries());
            }
        }

        /** Entries after the snapshot are kept if the log agrees with it at its index, else all dropped. */
        void install(SnapshotMetaProto meta, ByteString data) {
            long index = meta.getLastIncluded().getIndex();
            boolean agrees = index <= lastIndex() && termAt(index) == meta.getLastIncluded().getTerm();
            if (agrees) {
                entries.subList(0, Math.toIntExact(index - snapshotIndex())).clear();
            } else {
                entries.clear();
            }
            snapshot = meta;
            snapshotData = data;
        }
    }
}
