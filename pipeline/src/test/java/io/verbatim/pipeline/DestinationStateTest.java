package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.RemoteException.Kind;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class DestinationStateTest {
    private static final SourcePosition P1 = SourcePosition.of(1, 1);
    private static final SourcePosition P2 = SourcePosition.of(1, 2);
    private static final SourcePosition P3 = SourcePosition.of(1, 3);

    @Test
    void aPersistedPositionIsADuplicateAndAPushedOneIsUnknown() {
        Pair d = new Pair();
        d.assertAppended(1, 0, P1);
        d.persisted(P1);
        d.assertDuplicate(2, 0, P1);
        d.assertAppended(2, 1, P2); // pushed, persistence under way
        d.assertRefused(3, 0, P2, Kind.IN_FLIGHT);
        d.persisted(P2);
        d.assertDuplicate(4, 0, P2);
    }

    @Test
    void partsOrderBeforeTheirWholeEntry() {
        Pair d = new Pair();
        d.assertAppended(1, 0, P2.withPart(0));
        d.persisted(P2.withPart(0));
        d.assertAppended(1, 1, P2.withPart(1));
        d.persisted(P2.withPart(1));
        d.assertDuplicate(2, 0, P2.withPart(0));
        d.assertAppended(2, 1, P2); // the whole entry is not covered by its parts
    }

    @Test
    void aGapInTheSessionPoisonsTheRestOfIt() {
        Pair d = new Pair();
        d.assertAppended(1, 0, P1);
        d.assertRefused(1, 2, P3, Kind.OUT_OF_ORDER); // sequence 1 never came
        d.assertRefused(1, 1, P2, Kind.OUT_OF_ORDER);
        d.assertAppended(2, 0, P2); // a new session starts clean
    }

    @Test
    void aSessionRefusedAtItsFirstSendRefusesTheRestOfIt() {
        Pair d = new Pair();
        d.assertAppended(1, 0, P1);
        d.persisted(P1);
        d.assertRefused(2, 1, P2, Kind.OUT_OF_ORDER); // session 2's sequence 0 was lost
        d.assertRefused(2, 0, P2, Kind.OUT_OF_ORDER); // not a fresh start: the rest of session 2 is refused
        d.assertRefused(2, 2, P3, Kind.OUT_OF_ORDER);
        d.assertRefused(1, 1, P2, Kind.OUT_OF_ORDER); // and session 2 fenced session 1 all the same
        d.assertAppended(3, 0, P2);
    }

    @Test
    void aNewerSessionFencesOlderOnes() {
        Pair d = new Pair();
        d.assertAppended(5, 0, P1);
        d.persisted(P1);
        d.assertAppended(6, 0, P2);
        d.assertRefused(5, 1, P3, Kind.OUT_OF_ORDER);
    }

    @Test
    void aRejectedSendPoisonsItsSessionOnly() {
        Pair d = new Pair();
        d.assertAppended(1, 0, P1);
        d.state = d.state.poison(1);
        d.assertRefused(1, 1, P2, Kind.OUT_OF_ORDER);
        d.state = d.state.poison(7); // an unknown session changes nothing
        d.assertAppended(2, 0, P2);
    }

    @Test
    void aSealedSegmentTakesNothingNewButStillAnswersDuplicates() {
        Pair d = new Pair();
        d.assertAppended(1, 0, P1);
        d.persisted(P1);
        d.sealed = true;
        d.assertDuplicate(2, 0, P1);
        d.assertRefused(3, 0, P2, Kind.SEALED);
    }

    @Test
    void splitChildrenInheritWholeEntriesOnly() {
        Pair whole = new Pair();
        whole.assertAppended(1, 0, P2);
        whole.persisted(P2);
        Pair child = new Pair(whole.state.inheritedByChild());
        child.assertDuplicate(1, 0, P2.withPart(3));

        Pair parted = new Pair();
        parted.assertAppended(1, 0, P2.withPart(0));
        parted.persisted(P2.withPart(0));
        Pair regrouped = new Pair(parted.state.inheritedByChild());
        regrouped.assertDuplicate(1, 0, P1);
        // The child may group P2's messages differently: it must take the part.
        regrouped.assertAppended(1, 1, P2.withPart(0));
    }

    @Test
    void aSplitChildOfAPartedFirstEntryOfALedgerInheritsEverythingOfTheLedgersBefore() {
        Pair parted = new Pair();
        SourcePosition firstOfLedger7 = SourcePosition.of(7, 0);
        parted.assertAppended(1, 0, SourcePosition.of(5, 40));
        parted.persisted(SourcePosition.of(5, 40));
        parted.assertAppended(1, 1, firstOfLedger7.withPart(0));
        parted.persisted(firstOfLedger7.withPart(0));
        Pair child = new Pair(parted.state.inheritedByChild());
        child.assertDuplicate(1, 0, SourcePosition.of(5, 40));
        child.assertDuplicate(1, 1, SourcePosition.of(6, 3));
        child.assertAppended(1, 2, firstOfLedger7.withPart(0));
    }

    @Test
    void aPositionImplausiblyFarPastTheHighestTakenIsRefusedAndLeavesTheMarkAsItWas() {
        long jump = DestinationState.MAX_ENTRY_JUMP;
        long ledgers = DestinationState.MAX_LEDGER_JUMP;
        Pair d = new Pair();
        // the reported attack: one entry at 0:2^62 made every later real entry a duplicate
        d.assertRefused(1, 0, SourcePosition.of(0, 1L << 62), Kind.IMPLAUSIBLE);
        assertThat(d.state.persisted()).isEmpty();
        assertThat(d.state.pushed()).isEmpty();
        d.assertRefused(2, 0, SourcePosition.of(1L << 62, 0), Kind.IMPLAUSIBLE);
        new Pair().assertRefused(1, 0, SourcePosition.of(ledgers + 1, 0), Kind.IMPLAUSIBLE);
        d.assertAppended(3, 0, SourcePosition.of(ledgers, jump)); // at both bounds: taken
        d.persisted(SourcePosition.of(ledgers, jump));
        d.assertRefused(3, 1, SourcePosition.of(ledgers, 2 * jump + 1), Kind.IMPLAUSIBLE);
        d.assertRefused(4, 0, SourcePosition.of(2 * ledgers + 1, 0), Kind.IMPLAUSIBLE);
        d.assertRefused(5, 0, SourcePosition.of(ledgers + 1, jump + 1), Kind.IMPLAUSIBLE);
        d.assertAppended(6, 0, SourcePosition.of(2 * ledgers, jump)); // a new ledger, at both bounds
        d.assertAppended(6, 1, SourcePosition.of(2 * ledgers, 2 * jump));
        d.persisted(SourcePosition.of(2 * ledgers, 2 * jump));
        d.assertDuplicate(7, 0, SourcePosition.of(0, 1L << 62)); // below the mark: a duplicate, as ever
        // the embedded storage's ledger ids come from its clock, 2^10 a millisecond: taken from 0:0 for centuries
        long in2150 = (Instant.parse("2150-01-01T00:00:00Z").toEpochMilli()
                - Instant.parse("2020-01-01T00:00:00Z").toEpochMilli()) << 10;
        new Pair().assertAppended(1, 0, SourcePosition.of(in2150, 0));
    }

    @Test
    void theRefusalOfAnImplausiblePositionNamesItAndTheMark() {
        DestinationState held = DestinationState.EMPTY.admit(1, 0, P1, false, true).next().persisted(P1);
        Admission a = held.admit(1, 1, SourcePosition.of(1, 1L << 62), false, true);
        assertThat(a).isInstanceOfSatisfying(Admission.Refused.class, r -> assertThat(r.message())
                .isEqualTo("source position 1:" + (1L << 62) + " is implausibly far past the highest position stored, "
                        + "1:1: more than 2^40 entries ahead in its ledger"));
    }

    @Test
    void aRecoveredPairHasNothingInFlight() {
        Pair d = new Pair();
        d.assertAppended(4, 0, P1);
        d.assertAppended(4, 1, P2); // pushed, not persisted: lost in the crash
        DestinationState recovered = DestinationState.EMPTY.recovered(4, P1);
        assertThat(recovered.pushed()).contains(P1);
        assertThat(recovered.persisted()).contains(P1);
        Pair after = new Pair(recovered);
        after.assertDuplicate(5, 0, P1);
        after.assertAppended(5, 1, P2);
        assertThat(recovered.recovered(2, SourcePosition.of(0, 9))).as("never lower")
                .isEqualTo(recovered);
    }

    @Test
    void withoutSessionOrderItIsPulsarsV2DeduplicationAloneWithItsHole() {
        Pair d = new Pair();
        d.sessionOrder = false;
        d.assertAppended(1, 0, P1);
        d.persisted(P1);
        d.assertAppended(1, 2, P3); // P2 was lost on the way: nothing notices the gap
        d.persisted(P3);
        d.assertDuplicate(2, 0, P2); // the re-sent P2 is taken for a duplicate: lost (#26113)
    }

    @Test
    void theDecisionIsAFunctionOfItsArguments() {
        DestinationState before = DestinationState.EMPTY.admit(1, 0, P1, false, true).next().persisted(P1);
        Admission first = before.admit(1, 1, P2, false, true);
        Admission again = before.admit(1, 1, P2, false, true);
        assertThat(again).isEqualTo(first);
        assertThat(before.pushed()).as("the state it was asked of is unchanged").contains(P1);
        assertThat(first.next().pushed()).contains(P2);
    }

    /** Holds one pair's state and applies each answer, as a storage does. */
    private static final class Pair {
        DestinationState state;
        boolean sealed;
        boolean sessionOrder = true;

        Pair() {
            this(DestinationState.EMPTY);
        }

        Pair(DestinationState state) {
            this.state = state;
        }

        Admission admit(long session, long sequence, SourcePosition position) {
            Admission a = state.admit(session, sequence, position, sealed, sessionOrder);
            state = a.next();
            return a;
        }

        void persisted(SourcePosition position) {
            state = state.persisted(position);
        }

        void assertAppended(long session, long sequence, SourcePosition position) {
            assertThat(admit(session, sequence, position)).isInstanceOf(Admission.Append.class);
        }

        void assertDuplicate(long session, long sequence, SourcePosition position) {
            assertThat(admit(session, sequence, position)).isInstanceOf(Admission.Duplicate.class);
        }

        void assertRefused(long session, long sequence, SourcePosition position, Kind kind) {
            assertThat(admit(session, sequence, position)).isInstanceOfSatisfying(Admission.Refused.class,
                    r -> assertThat(r.kind()).as(r.message()).isEqualTo(kind));
        }
    }
}
