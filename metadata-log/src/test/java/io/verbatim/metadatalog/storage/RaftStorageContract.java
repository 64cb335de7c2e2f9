package io.verbatim.metadatalog.storage;

import static io.verbatim.metadatalog.storage.Entries.concat;
import static io.verbatim.metadatalog.storage.Entries.entries;
import static io.verbatim.metadatalog.storage.Entries.entry;
import static io.verbatim.metadatalog.storage.Entries.hardState;
import static io.verbatim.metadatalog.storage.Entries.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.storage.RaftStorage.Recovered;
import java.util.List;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link RaftStorage} promises, run against each implementation. A subclass says how to make a
 * fresh storage, reopen a closed one, and crash one (losing what was not synced, or keeping some of it).
 */
abstract class RaftStorageContract {
    private RaftStorage last;

    /** A new, empty storage. */
    protected abstract RaftStorage create();

    /** The same storage again after {@link RaftStorage#close}. */
    protected abstract RaftStorage reopen(RaftStorage closed);

    /** The storage after a crash that lost everything not synced. */
    protected abstract RaftStorage crash(RaftStorage storage);

    /** The storage after a crash that kept some unsynced writes, drawn from {@code random}. */
    protected abstract RaftStorage crashTorn(RaftStorage storage, RandomGenerator random);

    private RaftStorage track(RaftStorage s) {
        last = s;
        return s;
    }

    private RaftStorage fresh() {
        return track(create());
    }

    private RaftStorage reopened(RaftStorage s) {
        s.close();
        return track(reopen(s));
    }

    private RaftStorage crashed(RaftStorage s) {
        return track(crash(s));
    }

    @AfterEach
    void closeLast() {
        if (last != null) {
            last.close();
        }
    }

    @Test
    void freshStorageRecoversNothing() {
        assertThat(fresh().recover()).isEqualTo(Recovered.empty());
    }

    @Test
    void appendedEntriesReadBackAfterReopen() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 3));
        s.append(entries(2, 4, 40));
        Recovered r = reopened(s).recover();
        assertThat(r.entries()).isEqualTo(concat(entries(1, 1, 3), entries(2, 4, 40)));
        assertThat(r.snapshot()).isEmpty();
    }

    @Test
    void conflictingSuffixIsReplaced() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 30));
        s.sync();
        s.append(entries(3, 12, 14));
        List<LogEntryProto> expected = concat(entries(1, 1, 11), entries(3, 12, 14));
        assertThat(s.recover().entries()).isEqualTo(expected);
        s.append(entries(3, 15, 16));
        assertThat(reopened(s).recover().entries()).isEqualTo(concat(expected, entries(3, 15, 16)));
    }

    @Test
    void entriesAfterTheBatchAreDroppedEvenIfTheBatchMatches() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 10));
        s.append(entries(1, 4, 6));
        assertThat(s.recover().entries()).isEqualTo(entries(1, 1, 6));
        assertThat(reopened(s).recover().entries()).isEqualTo(entries(1, 1, 6));
    }

    @Test
    void appendRefusesAGapOrADecreasingTerm() {
        RaftStorage s = fresh();
        s.append(entries(2, 1, 3));
        assertThatThrownBy(() -> s.append(entries(2, 5, 6))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must start in [1, 4]");
        assertThatThrownBy(() -> s.append(entries(1, 4, 4))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lower than the term 2");
        assertThatThrownBy(() -> s.append(List.of(entry(2, 4), entry(2, 6)))).isInstanceOf(IllegalArgumentException.class);
        assertThat(s.recover().entries()).isEqualTo(entries(2, 1, 3));
    }

    @Test
    void hardStateRoundTrips() {
        RaftStorage s = fresh();
        s.saveHardState(hardState(3, "us-east.c1", 0));
        s.sync();
        s.saveHardState(hardState(4, "us-east.c2", 0));
        assertThat(s.recover().hardState()).isEqualTo(hardState(4, "us-east.c2", 0));
        assertThat(reopened(s).recover().hardState()).isEqualTo(hardState(4, "us-east.c2", 0));
    }

    @Test
    void snapshotCompactsAndKeepsTheEntriesThatAgree() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 50));
        s.saveSnapshot(snapshot(1, 40), ByteString.copyFromUtf8("state at 40"));
        assertThat(s.recover().entries()).isEqualTo(entries(1, 41, 50));
        Recovered r = reopened(s).recover();
        assertThat(r.snapshot()).contains(snapshot(1, 40));
        assertThat(r.entries()).isEqualTo(entries(1, 41, 50));
        assertThat(last.snapshotData()).contains(ByteString.copyFromUtf8("state at 40"));
    }

    @Test
    void snapshotDropsALogThatDisagrees() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 20));
        s.saveSnapshot(snapshot(2, 15), ByteString.copyFromUtf8("from the leader"));
        assertThat(s.recover().entries()).isEmpty();
        s.append(entries(2, 16, 18));
        Recovered r = reopened(s).recover();
        assertThat(r.snapshot()).contains(snapshot(2, 15));
        assertThat(r.entries()).isEqualTo(entries(2, 16, 18));
    }

    @Test
    void snapshotBeyondTheLogDropsIt() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 5));
        s.saveSnapshot(snapshot(3, 100), ByteString.copyFromUtf8("far ahead"));
        s.append(entries(3, 101, 101));
        Recovered r = reopened(s).recover();
        assertThat(r.entries()).isEqualTo(entries(3, 101, 101));
        assertThat(r.snapshot()).contains(snapshot(3, 100));
    }

    @Test
    void snapshotDataIsTheLatestAndOlderSnapshotsAreRefused() {
        RaftStorage s = fresh();
        assertThat(s.snapshotData()).isEmpty();
        s.append(entries(1, 1, 30));
        s.saveSnapshot(snapshot(1, 10), ByteString.copyFromUtf8("ten"));
        s.saveSnapshot(snapshot(1, 20), ByteString.copyFromUtf8("twenty"));
        assertThatThrownBy(() -> s.saveSnapshot(snapshot(1, 15), ByteString.EMPTY))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(s.snapshotData()).contains(ByteString.copyFromUtf8("twenty"));
        assertThat(reopened(s).snapshotData()).contains(ByteString.copyFromUtf8("twenty"));
        assertThat(last.recover().entries()).isEqualTo(entries(1, 21, 30));
    }

    @Test
    void snapshotIsDurableWithoutASync() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 10));
        s.saveSnapshot(snapshot(1, 8), ByteString.copyFromUtf8("eight"));
        RaftStorage after = crashed(s);
        assertThat(after.recover().snapshot()).contains(snapshot(1, 8));
        assertThat(after.recover().entries()).isEqualTo(entries(1, 9, 10));
        assertThat(after.snapshotData()).contains(ByteString.copyFromUtf8("eight"));
    }

    @Test
    void syncedWritesSurviveACrash() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 25));
        s.saveHardState(hardState(1, "b", 20));
        s.sync();
        Recovered r = crashed(s).recover();
        assertThat(r.entries()).isEqualTo(entries(1, 1, 25));
        assertThat(r.hardState()).isEqualTo(hardState(1, "b", 20));
    }

    @Test
    void unsyncedWritesAreLostInACrash() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 5));
        s.saveHardState(hardState(1, "a", 3));
        s.sync();
        s.append(entries(1, 6, 9));
        s.saveHardState(hardState(2, "b", 3));
        Recovered r = crashed(s).recover();
        assertThat(r.entries()).isEqualTo(entries(1, 1, 5));
        assertThat(r.hardState()).isEqualTo(hardState(1, "a", 3));
    }

    @Test
    void unsyncedWritesMayBeLostButNeverLeaveAGap() {
        for (int seed = 0; seed < 40; seed++) {
            RaftStorage s = fresh();
            s.append(entries(1, 1, 10));
            s.sync();
            s.append(entries(1, 11, 20));
            s.append(entries(2, 21, 30));
            List<LogEntryProto> got = track(crashTorn(s, new SplittableRandom(seed))).recover().entries();
            assertThat(got.size()).as("seed %d", seed).isBetween(10, 30);
            assertThat(got).as("seed %d", seed).isEqualTo(concat(entries(1, 1, 20), entries(2, 21, 30)).subList(0, got.size()));
            last.close();
            last = null;
        }
    }

    @Test
    void replacedSuffixNeverComesBackAfterACrash() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 20));
        s.sync();
        s.append(entries(2, 8, 9));
        s.sync();
        assertThat(crashed(s).recover().entries()).isEqualTo(concat(entries(1, 1, 7), entries(2, 8, 9)));
    }

    @Test
    void unsyncedReplacementLeavesTheOldLogOrThePrefixOfTheNewOneNeverAMix() {
        List<LogEntryProto> old = entries(1, 1, 20);
        List<LogEntryProto> replaced = concat(entries(1, 1, 7), entries(2, 8, 12));
        for (int seed = 0; seed < 40; seed++) {
            RaftStorage s = fresh();
            s.append(old);
            s.sync();
            s.append(entries(2, 8, 12));
            List<LogEntryProto> got = track(crashTorn(s, new SplittableRandom(seed))).recover().entries();
            boolean prefixOfOld = got.equals(old.subList(0, Math.min(got.size(), old.size())));
            boolean prefixOfNew = got.size() <= replaced.size() && got.equals(replaced.subList(0, got.size()));
            assertThat(prefixOfOld || prefixOfNew).as("seed %d: %s", seed, got).isTrue();
            assertThat(got.size()).as("seed %d", seed).isGreaterThanOrEqualTo(7);
            last.close();
            last = null;
        }
    }

    @Test
    void appendContinuesAfterACrash() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 5));
        s.sync();
        s.append(entries(1, 6, 8));
        RaftStorage after = crashed(s);
        after.append(entries(2, 6, 7));
        after.sync();
        assertThat(reopened(after).recover().entries()).isEqualTo(concat(entries(1, 1, 5), entries(2, 6, 7)));
    }

    @Test
    void readStopsAtMaxBytesButReturnsAtLeastOne() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 40));
        long one = Records.HEADER_BYTES + entry(1, 1).getSerializedSize();
        assertThat(s.read(3, 41, 0)).isEqualTo(entries(1, 3, 3));
        assertThat(s.read(3, 41, 5 * one)).isEqualTo(entries(1, 3, 7));
        assertThat(s.read(3, 10, Long.MAX_VALUE)).isEqualTo(entries(1, 3, 9));
        assertThat(s.read(35, 100, Long.MAX_VALUE)).isEqualTo(entries(1, 35, 40));
        assertThat(s.read(41, 50, Long.MAX_VALUE)).isEmpty();
    }

    @Test
    void readAtOrBeforeTheSnapshotIsRefused() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 10));
        s.saveSnapshot(snapshot(1, 5), ByteString.EMPTY);
        assertThatThrownBy(() -> s.read(5, 8, Long.MAX_VALUE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("compacted");
        assertThat(s.read(6, 8, Long.MAX_VALUE)).isEqualTo(entries(1, 6, 7));
    }

    @Test
    void longLogWithReplacementsAcrossManyEntriesSurvivesReopen() {
        RaftStorage s = fresh();
        s.append(entries(1, 1, 300));
        s.append(entries(2, 120, 200));
        s.sync();
        s.append(entries(3, 50, 60));
        s.saveSnapshot(snapshot(1, 30), ByteString.copyFromUtf8("thirty"));
        s.append(entries(3, 61, 90));
        Recovered r = reopened(s).recover();
        assertThat(r.entries()).isEqualTo(concat(entries(1, 31, 49), entries(3, 50, 90)));
        assertThat(last.read(31, 91, Long.MAX_VALUE)).isEqualTo(r.entries());
    }

    @Test
    void closedStorageRefusesUse() {
        RaftStorage s = fresh();
        s.close();
        assertThatThrownBy(() -> s.append(entries(1, 1, 1))).isInstanceOf(IllegalStateException.class);
        last = null;
    }

    static HardStateProto none() {
        return HardStateProto.getDefaultInstance();
    }
}
