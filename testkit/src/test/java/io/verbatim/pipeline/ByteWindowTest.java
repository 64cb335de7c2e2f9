package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.budget.InFlightBudget;
import io.verbatim.embedded.SendFault;
import io.verbatim.embedded.SendFaults;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import io.verbatim.testkit.SimulatedLink;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** The replicator's window in bytes and the broker's budget, in virtual time. */
class ByteWindowTest {
    private static final Layout ONE = Layout.initial(1, 4, 0);

    /** One entry per message of {@code size} bytes, payloads {@code a/<n>/} padded. */
    private static void produce(Fixture f, int entries, int size) {
        for (int n = 0; n < entries; n++) {
            byte[] id = ("a/" + n + "/").getBytes(StandardCharsets.UTF_8);
            byte[] payload = new byte[Math.max(size, id.length)];
            System.arraycopy(id, 0, payload, 0, id.length);
            f.a.produce(List.of(Message.of("key", payload)), Compression.NONE);
        }
        f.a.log(0).seal();
    }

    private static long storedBytes(Fixture f) {
        return f.a.log(0).entries().stream().mapToLong(e -> e.bytes().remaining()).sum();
    }

    /** Virtual milliseconds until the replicator completed. */
    private static long runToEnd(Fixture f) {
        long start = f.clock.now(TimeUnit.MILLISECONDS);
        Disposable run = f.replicator(0).run().subscribe();
        for (int i = 0; i < 100_000 && !run.isDisposed(); i++) {
            f.advance(Duration.ofMillis(1));
        }
        assertThat(run.isDisposed()).as("the replicator completed").isTrue();
        return f.clock.now(TimeUnit.MILLISECONDS) - start;
    }

    @Test
    void theWindowBoundsTheBytesInFlightAndIsGivenBackAtTheEnd() {
        Fixture f = new Fixture(ONE);
        long entry = 10_000;
        long window = 20 * (entry + InFlightBudget.ENTRY_OVERHEAD_BYTES);
        f.config = f.config.withMaxInFlightBytes(window);
        f.inFlightBudget = InFlightBudget.of(1L << 40);
        AtomicLong most = new AtomicLong();
        f.b.faults((segment, producer, position) -> {
            most.accumulateAndGet(f.inFlightBudget.used(), Math::max);
            return new SendFault.Delay(Duration.ofMillis(100));
        });
        produce(f, 400, (int) entry);
        runToEnd(f);
        assertThat(f.deliveredToB()).hasSize(400);
        assertThat(most.get()).isLessThanOrEqualTo(window).isGreaterThan(window / 2);
        assertThat(f.inFlightBudget.used()).isZero();
    }

    @Test
    void rewindsGiveBackEverythingTheirPassHeld() {
        Fixture f = new Fixture(ONE);
        f.config = f.config.withMaxInFlightBytes(64 * 1024);
        InFlightBudget broker = InFlightBudget.of(32 * 1024); // less than the window: the broker binds
        f.inFlightBudget = broker;
        f.b.faults(SendFaults.seeded(42, 0.05, Duration.ofMillis(20)));
        f.config = f.config.withSendTimeout(Duration.ofSeconds(1));
        produce(f, 300, 3000);
        runToEnd(f);
        assertThat(f.metrics.rewinds.sum()).as("passes ended in failures").isPositive();
        assertThat(f.deliveredToB()).containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, 300).mapToObj(n -> "a/" + n).toList());
        assertThat(broker.used()).as("nothing leaked across passes").isZero();
    }

    @Test
    void aBrokerBudgetSmallerThanOneEntryStillReplicatesOneEntryAtATime() {
        Fixture f = new Fixture(ONE);
        f.inFlightBudget = InFlightBudget.of(1);
        f.b.faults(SendFaults.roundTrip(Duration.ofMillis(10)));
        produce(f, 20, 5000);
        long ms = runToEnd(f);
        assertThat(f.deliveredToB()).hasSize(20);
        assertThat(ms).as("one round trip per entry").isGreaterThanOrEqualTo(200);
        assertThat(f.inFlightBudget.used()).isZero();
    }

    @Test
    void theDefaultWindowKeepsAWanLinkBusyWhereAThousandEntriesDidNot() {
        // 10,000 entries of 1 KiB over 100 MB/s and 100 ms: 10 MB, 0.1 s on the wire
        Fixture bytes = new Fixture(ONE);
        bytes.network = r -> new SimulatedLink(100_000_000, Duration.ofMillis(100), bytes.clock).over(r);
        produce(bytes, 10_000, 1000);
        double ideal = storedBytes(bytes) / 100e3 + 100; // ms
        long byBytes = runToEnd(bytes);
        assertThat(byBytes).as("about the link's time").isLessThan((long) (ideal * 1.15));

        Fixture entries = new Fixture(ONE);
        entries.config = entries.config.withMaxInFlight(1000); // the old default
        entries.network = r -> new SimulatedLink(100_000_000, Duration.ofMillis(100), entries.clock).over(r);
        produce(entries, 10_000, 1000);
        long byEntries = runToEnd(entries);
        assertThat(byEntries).as("1000 entries of 1 KiB per round trip: 10 MB/s").isGreaterThan(900);
    }
}
