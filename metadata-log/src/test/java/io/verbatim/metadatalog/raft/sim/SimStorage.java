package io.verbatim.metadatalog.raft.sim;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.storage.RaftStorage;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * A member's disk in the simulation: writes are buffered until {@link #sync}; a {@link #crash} keeps a
 * random prefix of the unsynced writes (never half of one, never a later one without the earlier ones),
 * as {@link RaftStorage} allows. Snapshots are durable at once.
 */
final class SimStorage implements RaftStorage {
    private sealed interface Write {
    }

    private record Append(List<LogEntryProto> entries) implements Write {
    }

    private record Hard(HardStateProto state) implements Write {
    }

    private Optional<SnapshotMetaProto> snapshot = Optional.empty();
    private ByteString snapshotData = ByteString.EMPTY;
    private HardStateProto hardState = HardStateProto.getDefaultInstance();
    private final ArrayList<LogEntryProto> entries = new ArrayList<>();
    private final List<Write> unsynced = new ArrayList<>();

    @Override
    public Recovered recover() {
        return new Recovered(snapshot, hardState, entries);
    }

    @Override
    public void append(List<LogEntryProto> more) {
        unsynced.add(new Append(List.copyOf(more)));
    }

    @Override
    public void saveHardState(HardStateProto state) {
        unsynced.add(new Hard(state));
    }

    @Override
    public void sync() {
        unsynced.forEach(this::apply);
        unsynced.clear();
    }

    /** The process dies: a random prefix of the unsynced writes reached the disk, the rest is lost. */
    void crash(RandomGenerator random) {
        int survive = unsynced.isEmpty() ? 0 : random.nextInt(unsynced.size() + 1);
        unsynced.subList(0, survive).forEach(this::apply);
        unsynced.clear();
    }

    private void apply(Write w) {
        if (w instanceof Hard h) {
            hardState = h.state();
        } else if (w instanceof Append a) {
            for (LogEntryProto e : a.entries()) {
                long first = firstIndex();
                long at = e.getIndex();
                if (at < first) {
                    continue;
                }
                int pos = (int) (at - first);
                if (pos > entries.size()) {
                    throw new IllegalStateException("gap: append " + at + " after " + (first + entries.size() - 1));
                }
                entries.subList(pos, entries.size()).clear();
                entries.add(e);
            }
        }
    }

    private long firstIndex() {
        return snapshot.map(s -> s.getLastIncluded().getIndex()).orElse(0L) + 1;
    }

    @Override
    public void saveSnapshot(SnapshotMetaProto meta, ByteString data) {
        sync();
        long index = meta.getLastIncluded().getIndex();
        if (snapshot.isPresent() && snapshot.get().getLastIncluded().getIndex() >= index) {
            return;
        }
        long first = firstIndex();
        int pos = (int) (index - first);
        boolean agrees = pos >= 0 && pos < entries.size() && entries.get(pos).getTerm() == meta.getLastIncluded().getTerm();
        if (agrees) {
            entries.subList(0, pos + 1).clear();
        } else {
            entries.clear();
        }
        snapshot = Optional.of(meta);
        snapshotData = data;
    }

    /** The index of the snapshot held, 0 if none. */
    long snapshotIndex() {
        return snapshot.map(m -> m.getLastIncluded().getIndex()).orElse(0L);
    }

    @Override
    public Optional<ByteString> snapshotData() {
        return snapshot.map(s -> snapshotData);
    }

    /** The durable entries only: the simulator's members read their own in-memory log, never this. */
    @Override
    public List<LogEntryProto> read(long fromIndex, long toIndexExclusive, long maxBytes) {
        List<LogEntryProto> out = new ArrayList<>();
        long bytes = 0;
        for (LogEntryProto e : entries) {
            if (e.getIndex() >= fromIndex && e.getIndex() < toIndexExclusive && (out.isEmpty() || bytes < maxBytes)) {
                out.add(e);
                bytes += e.getSerializedSize();
            }
        }
        return out;
    }

    @Override
    public void close() {
    }
}
