package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.entry.SourcePosition;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.impl.BatchMessageIdImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.junit.jupiter.api.Test;

/** What is read of a sealed topic's broker state (pure). */
class SealedTailsTest {

    private static LedgerInfo ledger(long id, long entries) {
        LedgerInfo info = new LedgerInfo();
        info.ledgerId = id;
        info.entries = entries;
        return info;
    }

    @Test
    void aReplicatorsHighestPositionIsItsTwoSnapshotPropertiesInWireForm() {
        SourcePosition whole = SourcePosition.of(7, 40);
        SourcePosition part = SourcePosition.of(7, 41).withPart(2);
        Map<String, Long> properties = Map.of(
                "pulsar.repl.east.3_LID", 7L, "pulsar.repl.east.3_EID", WirePositions.encode(whole).entryId(),
                "pulsar.repl.east.4_LID", 7L, "pulsar.repl.east.4_EID", WirePositions.encode(part).entryId(),
                "app-1", 12L,
                "pulsar.repl.east.5_LID", 9L);
        assertThat(SealedTails.highest(properties)).as("an application producer's sequence id, a half pair: none")
                .isEqualTo(Map.of("pulsar.repl.east.3", whole, "pulsar.repl.east.4", part));
    }

    @Test
    void theTailStartsSoManyEntriesBeforeTheEndAcrossLedgers() {
        List<LedgerInfo> ledgers = List.of(ledger(3, 500), ledger(5, 800), ledger(9, 0));
        assertThat(SealedTails.tailStart(ledgers, SourcePosition.of(9, 99), 50)).isEqualTo(SourcePosition.of(9, 50));
        assertThat(SealedTails.tailStart(ledgers, SourcePosition.of(9, 99), 100)).isEqualTo(SourcePosition.of(9, 0));
        assertThat(SealedTails.tailStart(ledgers, SourcePosition.of(9, 99), 300)).isEqualTo(SourcePosition.of(5, 600));
        assertThat(SealedTails.tailStart(ledgers, SourcePosition.of(9, 99), 5_000)).as("fewer entries than asked")
                .isEqualTo(SourcePosition.of(3, 0));
        assertThat(SealedTails.tailStart(List.of(ledger(3, 500), ledger(5, 0), ledger(6, 0)),
                SourcePosition.of(3, 499), 10)).as("empty ledgers after the last entry").isEqualTo(SourcePosition.of(3,
                490));
    }

    @Test
    void aTopicWhoseLastConfirmedEntryNamesNoneEndsAtItsLastLedgerWithEntries() {
        List<LedgerInfo> ledgers = List.of(ledger(3, 500), ledger(5, 20), ledger(9, 0));
        assertThat(SealedTails.lastEntry(ledgers, "9:-1")).as("a ledger opened after a reload, nothing written")
                .contains(SourcePosition.of(5, 19));
        assertThat(SealedTails.lastEntry(ledgers, "9:4")).contains(SourcePosition.of(9, 4));
        assertThat(SealedTails.lastEntry(List.of(ledger(3, 0)), "3:-1")).as("nothing stored").isEmpty();
    }

    @Test
    void aBatchsMessagesCountAsOneEntry() {
        SealedTails.EntryCount count = new SealedTails.EntryCount();
        assertThat(count.add(new BatchMessageIdImpl(4, 0, -1, 0))).isEqualTo(1);
        assertThat(count.add(new BatchMessageIdImpl(4, 0, -1, 1))).isEqualTo(1);
        assertThat(count.add(new BatchMessageIdImpl(4, 0, -1, 199))).isEqualTo(1);
        assertThat(count.add(new MessageIdImpl(4, 1, -1))).isEqualTo(2);
        assertThat(count.add(new BatchMessageIdImpl(5, 0, -1, 0))).isEqualTo(3);
    }
}
