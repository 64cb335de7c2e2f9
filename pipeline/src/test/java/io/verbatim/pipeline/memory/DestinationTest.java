package io.verbatim.pipeline.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession.Receipt;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.RemoteException.Kind;
import org.junit.jupiter.api.Test;

class DestinationTest {
    private static final SourcePosition P1 = SourcePosition.of(1, 1);
    private static final SourcePosition P2 = SourcePosition.of(1, 2);
    private static final SourcePosition P3 = SourcePosition.of(1, 3);

    @Test
    void aPersistedPositionIsADuplicateAndAPushedOneIsUnknown() {
        Destination d = new Destination(0);
        assertThat(d.admit(1, 0, P1, false, true)).isNull();
        d.persisted(P1);
        assertThat(d.admit(2, 0, P1, false, true)).isEqualTo(Receipt.DUPLICATE);
        assertThat(d.admit(2, 1, P2, false, true)).isNull(); // pushed, persistence under way
        assertRefused(() -> d.admit(3, 0, P2, false, true), Kind.IN_FLIGHT);
        d.persisted(P2);
        assertThat(d.admit(4, 0, P2, false, true)).isEqualTo(Receipt.DUPLICATE);
    }

    @Test
    void partsOrderBeforeTheirWholeEntry() {
        Destination d = new Destination(0);
        assertThat(d.admit(1, 0, P2.withPart(0), false, true)).isNull();
        d.persisted(P2.withPart(0));
        assertThat(d.admit(1, 1, P2.withPart(1), false, true)).isNull();
        d.persisted(P2.withPart(1));
        assertThat(d.admit(2, 0, P2.withPart(0), false, true)).isEqualTo(Receipt.DUPLICATE);
        assertThat(d.admit(2, 1, P2, false, true)).as("the whole entry is not covered by its parts").isNull();
    }

    @Test
    void aGapInTheSessionPoisonsTheRestOfIt() {
        Destination d = new Destination(0);
        assertThat(d.admit(1, 0, P1, false, true)).isNull();
        assertRefused(() -> d.admit(1, 2, P3, false, true), Kind.OUT_OF_ORDER); // sequence 1 never came
        assertRefused(() -> d.admit(1, 1, P2, false, true), Kind.OUT_OF_ORDER);
        assertThat(d.admit(2, 0, P2, false, true)).as("a new session starts clean").isNull();
    }

    @Test
    void aNewerSessionFencesOlderOnes() {
        Destination d = new Destination(0);
        d.admit(5, 0, P1, false, true);
        d.persisted(P1);
        d.admit(6, 0, P2, false, true);
        assertRefused(() -> d.admit(5, 1, P3, false, true), Kind.OUT_OF_ORDER);
    }

    @Test
    void aRejectedSendPoisonsItsSessionOnly() {
        Destination d = new Destination(0);
        d.admit(1, 0, P1, false, true);
        d.poison(1);
        assertRefused(() -> d.admit(1, 1, P2, false, true), Kind.OUT_OF_ORDER);
        d.poison(7); // an unknown session changes nothing
        assertThat(d.admit(2, 0, P2, false, true)).isNull();
    }

    @Test
    void aSealedSegmentTakesNothingNewButStillAnswersDuplicates() {
        Destination d = new Destination(0);
        d.admit(1, 0, P1, false, true);
        d.persisted(P1);
        assertThat(d.admit(2, 0, P1, true, true)).isEqualTo(Receipt.DUPLICATE);
        assertRefused(() -> d.admit(3, 0, P2, true, true), Kind.SEALED);
    }

    @Test
    void splitChildrenInheritWholeEntriesOnly() {
        Destination whole = new Destination(0);
        whole.admit(1, 0, P2, false, true);
        whole.persisted(P2);
        Destination child = whole.inheritedBy(1);
        assertThat(child.admit(1, 0, P2.withPart(3), false, true)).isEqualTo(Receipt.DUPLICATE);

        Destination parted = new Destination(0);
        parted.admit(1, 0, P2.withPart(0), false, true);
        parted.persisted(P2.withPart(0));
        Destination regrouped = parted.inheritedBy(1);
        assertThat(regrouped.admit(1, 0, P1, false, true)).isEqualTo(Receipt.DUPLICATE);
        assertThat(regrouped.admit(1, 1, P2.withPart(0), false, true))
                .as("the child may group P2's messages differently: it must take the part").isNull();
    }

    private static void assertRefused(Runnable call, Kind kind) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(RemoteException.class,
                e -> assertThat(e.kind()).isEqualTo(kind));
    }
}
