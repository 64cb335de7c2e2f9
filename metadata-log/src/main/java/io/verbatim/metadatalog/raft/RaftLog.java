package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The log in memory: a tail of entries at and before the latest snapshot (kept so members a little behind
 * are still sent entries, not the snapshot), then the entries after it, with what the driver has not yet
 * been handed ({@code unstableFrom}) and how far it may apply ({@code committed}) and has applied
 * ({@code applied}). The entries held are {@code (baseIndex, lastIndex]}; the term at {@code baseIndex}
 * is known too (a previous entry for an append of the first entry held); {@code baseIndex <= snapshotIndex}.
 * Keeps the configuration entries after the snapshot by index so the configuration in force at any index
 * from the snapshot on is at hand (the tail's are all committed, and none is needed there).
 */
final class RaftLog {
    /** The index before the first entry held, and its term: the snapshot's with no tail. */
    private long baseIndex;
    private long baseTerm;
    private long snapshotIndex;
    private long snapshotTerm;
    private RaftConfigurationProto snapshotConfiguration;
    private final ArrayList<LogEntryProto> entries = new ArrayList<>();
    private final TreeMap<Long, RaftConfigurationProto> configurations = new TreeMap<>();
    private long committed;
    private long applied;
    private long unstableFrom;

    RaftLog(long snapshotIndex, long snapshotTerm, RaftConfigurationProto snapshotConfiguration,
            List<LogEntryProto> stored, long committed) {
        this.baseIndex = snapshotIndex;
        this.baseTerm = snapshotTerm;
        this.snapshotIndex = snapshotIndex;
        this.snapshotTerm = snapshotTerm;
        this.snapshotConfiguration = snapshotConfiguration;
        for (LogEntryProto e : stored) {
            if (e.getIndex() <= snapshotIndex) {
                continue;
            }
            if (e.getIndex() != lastIndex() + 1) {
                throw new IllegalArgumentException("recovered entries are not contiguous: " + e.getIndex()
                        + " after " + lastIndex());
            }
            add(e);
        }
        this.committed = Math.max(snapshotIndex, Math.min(committed, lastIndex()));
        this.applied = snapshotIndex;
        this.unstableFrom = lastIndex() + 1;
    }

    long snapshotIndex() {
        return snapshotIndex;
    }

    long snapshotTerm() {
        return snapshotTerm;
    }

    /** The first entry held: at most {@code snapshotIndex + 1}, lower by the tail kept at compactions. */
    long firstIndex() {
        return baseIndex + 1;
    }

    long lastIndex() {
        return baseIndex + entries.size();
    }

    long lastTerm() {
        return entries.isEmpty() ? baseTerm : entries.get(entries.size() - 1).getTerm();
    }

    long committed() {
        return committed;
    }

    long applied() {
        return applied;
    }

    /** The term at {@code index}, or -1 if it is not known here (compacted or beyond the end). */
    long term(long index) {
        if (index == snapshotIndex) {
            return snapshotTerm;
        }
        if (index == baseIndex) {
            return baseTerm;
        }
        if (index < baseIndex || index > lastIndex()) {
            return -1;
        }
        return entry(index).getTerm();
    }

    LogEntryProto entry(long index) {
        return entries.get((int) (index - baseIndex - 1));
    }

    boolean matches(long index, long term) {
        return term(index) == term;
    }

    /** Whether a candidate whose log ends at (lastTerm, lastIndex) is at least as up to date as this log. */
    boolean isUpToDate(long candidateLastTerm, long candidateLastIndex) {
        return candidateLastTerm > lastTerm() || (candidateLastTerm == lastTerm() && candidateLastIndex >= lastIndex());
    }

    /** Entries from {@code from} on, at most {@code maxBytes} of them but at least one if there is one. */
    List<LogEntryProto> slice(long from, long maxBytes) {
        List<LogEntryProto> out = new ArrayList<>();
        long bytes = 0;
        for (long i = Math.max(from, firstIndex()); i <= lastIndex(); i++) {
            LogEntryProto e = entry(i);
            bytes += e.getSerializedSize();
            if (!out.isEmpty() && bytes > maxBytes) {
                break;
            }
            out.add(e);
        }
        return out;
    }

    /** Entries from {@code from} up to {@code to}, at most {@code maxBytes} of them but at least one if any. */
    List<LogEntryProto> slice(long from, long to, long maxBytes) {
        List<LogEntryProto> out = slice(from, maxBytes);
        while (!out.isEmpty() && out.get(out.size() - 1).getIndex() > to) {
            out.remove(out.size() - 1);
        }
        return out;
    }

    /** Appends at the end (a leader's own entry). */
    void append(LogEntryProto e) {
        if (e.getIndex() != lastIndex() + 1) {
            throw new IllegalStateException("append at " + e.getIndex() + " after " + lastIndex());
        }
        add(e);
    }

    /**
     * A follower's append of entries that follow a matched previous entry: entries already here with the
     * same term are kept, the first conflicting one and everything after it is replaced. Never touches
     * committed entries (the caller refused a request that overlaps them).
     *
     * @return whether a configuration entry was added or removed
     */
    boolean appendAfterMatch(List<LogEntryProto> incoming) {
        boolean configurationChanged = false;
        for (LogEntryProto e : incoming) {
            long index = e.getIndex();
            if (index <= lastIndex()) {
                if (term(index) == e.getTerm()) {
                    continue;
                }
                if (index <= committed) {
                    throw new IllegalStateException("truncating committed entry " + index + " (commit " + committed + ")");
                }
                configurationChanged |= truncateFrom(index);
            }
            add(e);
            configurationChanged |= e.hasConfigurationEntry();
        }
        return configurationChanged;
    }

    private boolean truncateFrom(long index) {
        if (index <= snapshotIndex) {
            throw new IllegalStateException("truncating at " + index + ", at or before the snapshot at " + snapshotIndex);
        }
        int keep = (int) (index - baseIndex - 1);
        entries.subList(keep, entries.size()).clear();
        unstableFrom = Math.min(unstableFrom, index);
        Map<Long, RaftConfigurationProto> dropped = configurations.tailMap(index, true);
        boolean any = !dropped.isEmpty();
        dropped.clear();
        return any;
    }

    private void add(LogEntryProto e) {
        entries.add(e);
        if (e.hasConfigurationEntry()) {
            configurations.put(e.getIndex(), e.getConfigurationEntry());
        }
    }

    /**
     * Where a leader should resume after a previous entry at {@code prevIndex} did not match: past the end
     * if this log is shorter, else the first index of the conflicting term here (one round trip per term,
     * not per entry), never at or below the commit index.
     */
    long conflictHint(long prevIndex) {
        if (prevIndex > lastIndex()) {
            return lastIndex() + 1;
        }
        long conflictTerm = term(prevIndex);
        long i = prevIndex;
        while (i - 1 > committed && term(i - 1) == conflictTerm) {
            i--;
        }
        return Math.max(i, committed + 1);
    }

    void commitTo(long index) {
        long to = Math.min(index, lastIndex());
        if (to > committed) {
            committed = to;
        }
    }

    boolean hasUnstable() {
        return unstableFrom <= lastIndex();
    }

    /** Hands the entries not yet handed to the driver. */
    List<LogEntryProto> takeUnstable() {
        List<LogEntryProto> out = new ArrayList<>();
        for (long i = Math.max(unstableFrom, firstIndex()); i <= lastIndex(); i++) {
            out.add(entry(i));
        }
        unstableFrom = lastIndex() + 1;
        return out;
    }

    /** Committed entries after {@code after}, to apply. */
    List<LogEntryProto> committedAfter(long after) {
        List<LogEntryProto> out = new ArrayList<>();
        for (long i = Math.max(after + 1, firstIndex()); i <= committed; i++) {
            out.add(entry(i));
        }
        return out;
    }

    void appliedTo(long index) {
        applied = Math.max(applied, index);
    }

    /** The configuration in force at {@code index}: the latest configuration entry at or before it. */
    RaftConfigurationProto configurationAt(long index) {
        Map.Entry<Long, RaftConfigurationProto> e = configurations.floorEntry(index);
        return e == null ? snapshotConfiguration : e.getValue();
    }

    /** The index of the entry (or snapshot) that holds the configuration in force at the end of the log. */
    long latestConfigurationIndex() {
        return configurations.isEmpty() ? snapshotIndex : configurations.lastKey();
    }

    /**
     * The index of the configuration entry from which {@code id} has been a listener in every configuration
     * since, if an earlier configuration this log holds made it a voter (it was demoted, or removed and
     * added back as a listener): until it holds that entry, its own log may make it a voter. 0 if not:
     * {@code id} is no listener, joined as one, or the entry or the voter before it is compacted.
     */
    long becameListenerAt(String id) {
        long since = 0;
        boolean listening = true;
        for (Map.Entry<Long, RaftConfigurationProto> e : configurations.descendingMap().entrySet()) {
            Membership m = Membership.of(e.getValue());
            if (listening && m.isListener(id)) {
                since = e.getKey();
                continue;
            }
            listening = false;
            if (m.isVoter(id)) {
                return since;
            }
        }
        return since > 0 && Membership.of(snapshotConfiguration).isVoter(id) ? since : 0;
    }

    RaftConfigurationProto latestConfiguration() {
        return configurationAt(lastIndex());
    }

    /**
     * A snapshot now covers the entries up to {@code index} (applied, and so durable): drops those before
     * the last {@code keep} of them, never any it already dropped (the tail only shrinks from the front).
     * {@code keep} 0 drops them all.
     */
    void compact(long index, long keep) {
        long term = term(index);
        RaftConfigurationProto configuration = configurationAt(index);
        long newBase = Math.max(baseIndex, index - Math.max(keep, 0));
        long newBaseTerm = term(newBase);
        entries.subList(0, (int) (newBase - baseIndex)).clear();
        configurations.headMap(index, true).clear();
        baseIndex = newBase;
        baseTerm = newBaseTerm;
        snapshotIndex = index;
        snapshotTerm = term;
        snapshotConfiguration = configuration;
    }

    /**
     * Installs a snapshot received from the leader: keeps the entries after it if the log agrees with it
     * at its index, else empties the log. The state machine restarts from the snapshot.
     */
    void restore(long index, long term, RaftConfigurationProto configuration, long keep) {
        if (matches(index, term) && index >= snapshotIndex) {
            compact(index, keep);
            snapshotConfiguration = configuration;
        } else {
            entries.clear();
            configurations.clear();
            baseIndex = index;
            baseTerm = term;
            snapshotIndex = index;
            snapshotTerm = term;
            snapshotConfiguration = configuration;
            unstableFrom = index + 1;
        }
        committed = Math.max(committed, index);
        applied = index;
        unstableFrom = Math.max(unstableFrom, index + 1);
    }
}
