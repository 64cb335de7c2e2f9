package io.verbatim.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

class InFlightBudgetTest {
    private static final long O = InFlightBudget.ENTRY_OVERHEAD_BYTES;

    /** Subscribes to an acquisition; the flag says whether it was granted. */
    private static AtomicBoolean take(InFlightBudget.Window w, long bytes) {
        AtomicBoolean granted = new AtomicBoolean();
        w.acquire(bytes).subscribe(null, e -> { throw new AssertionError(e); }, () -> granted.set(true));
        return granted;
    }

    @Test
    void aWindowHoldsAtMostItsBytesAndGivesThemBackOldestFirst() {
        InFlightBudget broker = InFlightBudget.unlimited();
        InFlightBudget.Window w = broker.window(3 * (100 + O), 1000);
        assertThat(take(w, 100)).isTrue();
        assertThat(take(w, 100)).isTrue();
        assertThat(take(w, 100)).isTrue();
        AtomicBoolean fourth = take(w, 100);
        assertThat(fourth).isFalse();
        assertThat(w.held()).isEqualTo(3 * (100 + O));
        w.releaseOldest();
        assertThat(fourth).isTrue();
        assertThat(w.entries()).isEqualTo(3);
        assertThat(broker.used()).isEqualTo(3 * (100 + O));
    }

    @Test
    void anEntryLargerThanTheWindowGoesAlone() {
        InFlightBudget.Window w = InFlightBudget.unlimited().window(1000, 1000);
        assertThat(take(w, 10)).isTrue();
        AtomicBoolean big = take(w, 1 << 20);
        assertThat(big).as("waits for the window to empty").isFalse();
        w.releaseOldest();
        assertThat(big).isTrue();
        AtomicBoolean next = take(w, 10);
        assertThat(next).as("nothing beside the oversized entry").isFalse();
        w.releaseOldest();
        assertThat(next).isTrue();
    }

    @Test
    void theEntryCountBoundsTooForAWindowOfTinyEntries() {
        InFlightBudget.Window w = InFlightBudget.unlimited().window(1L << 30, 2);
        assertThat(take(w, 1)).isTrue();
        assertThat(take(w, 1)).isTrue();
        AtomicBoolean third = take(w, 1);
        assertThat(third).isFalse();
        w.releaseOldest();
        assertThat(third).isTrue();
    }

    @Test
    void windowsShareTheBrokerBudgetAndEachAlwaysHasOneEntry() {
        InFlightBudget broker = InFlightBudget.of(2 * (100 + O));
        InFlightBudget.Window a = broker.window(1L << 20, 1000);
        InFlightBudget.Window b = broker.window(1L << 20, 1000);
        InFlightBudget.Window c = broker.window(1L << 20, 1000);
        assertThat(take(a, 100)).isTrue();
        assertThat(take(a, 100)).isTrue();
        AtomicBoolean a3 = take(a, 100);
        assertThat(a3).as("the broker budget is full").isFalse();
        assertThat(take(b, 100)).as("b holds nothing: it never starves").isTrue();
        AtomicBoolean b2 = take(b, 100);
        assertThat(b2).isFalse();
        assertThat(take(c, 5000)).as("c holds nothing either, whatever the size").isTrue();
        assertThat(broker.used()).isEqualTo(3 * (100 + O) + 5000 + O);
        c.releaseOldest();
        b.releaseOldest();
        assertThat(b2).as("b holds nothing again: granted").isTrue();
        assertThat(a3).as("still no room on the broker").isFalse();
        a.releaseOldest();
        assertThat(a3).as("still no room on the broker").isFalse();
        a.releaseOldest();
        assertThat(a3).as("a holds nothing").isTrue();
        assertThat(broker.used()).isEqualTo(2 * (100 + O));
    }

    @Test
    void closingAPassGivesBackEverythingAndDropsItsPendingEntry() {
        InFlightBudget broker = InFlightBudget.of(2 * (100 + O));
        InFlightBudget.Window a = broker.window(1L << 20, 1000);
        InFlightBudget.Window b = broker.window(1L << 20, 1000);
        take(a, 100);
        take(a, 100);
        AtomicBoolean a3 = take(a, 100);
        take(b, 100);
        AtomicBoolean b2 = take(b, 100);
        assertThat(a3).isFalse();
        assertThat(b2).isFalse();
        a.close();
        assertThat(a3).as("dropped with its pass").isFalse();
        assertThat(b2).as("behind a's place in the queue").isTrue();
        assertThat(a.held()).isZero();
        a.releaseOldest(); // an acknowledgement after the end: nothing left to give back
        b.close();
        assertThat(broker.used()).isZero();
        AtomicBoolean late = take(a, 1);
        assertThat(late).as("a closed window grants nothing").isFalse();
        assertThat(broker.used()).isZero();
    }

    @Test
    void cancellingAPendingEntryGivesUpItsPlace() {
        InFlightBudget broker = InFlightBudget.of(100 + O);
        InFlightBudget.Window a = broker.window(1L << 20, 1000);
        InFlightBudget.Window b = broker.window(1L << 20, 1000);
        take(a, 100);
        take(b, 100);
        AtomicBoolean a2 = new AtomicBoolean();
        Disposable pending = a.acquire(100).subscribe(null, null, () -> a2.set(true));
        AtomicBoolean b2 = take(b, 100);
        pending.dispose();
        a.releaseOldest();
        assertThat(a2).isFalse();
        b.releaseOldest();
        assertThat(b2).isTrue();
        assertThat(broker.used()).isEqualTo(100 + O);
    }

    @Test
    void oneAcquisitionAtATime() {
        InFlightBudget.Window w = InFlightBudget.of(1).window(1, 1);
        take(w, 10);
        take(w, 10);
        assertThatThrownBy(() -> w.acquire(10).block()).isInstanceOf(IllegalStateException.class);
    }

    /** The fast path's synchronous take grants exactly what an acquisition would grant at once, and no more. */
    @Test
    void tryAcquireTakesOnlyWhatAcquireWouldGrantAtOnceAndNeverJumpsTheBrokersQueue() {
        InFlightBudget broker = InFlightBudget.of(2 * (100 + O));
        InFlightBudget.Window a = broker.window(1L << 30, 1000);
        InFlightBudget.Window b = broker.window(1L << 30, 1000);
        assertThat(a.tryAcquire(100)).isTrue();
        assertThat(a.tryAcquire(100)).isTrue();
        assertThat(a.tryAcquire(100)).as("the broker's budget is used up").isFalse();
        assertThat(b.tryAcquire(1 << 20)).as("a window holding nothing always gets one entry").isTrue();
        AtomicBoolean queued = take(a, 100); // a waits in the broker's queue
        assertThat(queued).isFalse();
        b.releaseOldest();
        assertThat(queued).as("the budget is still a's own").isFalse();
        a.releaseOldest();
        assertThat(queued).as("granted by its own release").isTrue();
        InFlightBudget.Window c = broker.window(1L << 30, 1000);
        assertThat(c.tryAcquire(10)).isTrue();
        AtomicBoolean behind = take(a, 10);
        assertThat(behind).isFalse();
        assertThat(c.tryAcquire(1)).as("not ahead of a window waiting in the queue").isFalse();
        a.close();
        b.close();
        c.close();
        assertThat(broker.used()).isZero();
        assertThat(a.tryAcquire(1)).as("a closed window takes nothing").isFalse();
    }
}
