package io.verbatim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.StoredEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

class SimulatedLinkTest {
    private static final long MIB = 1 << 20;

    @Test
    void sendsSerialiseOnTheLinkAndTheirReceiptsComeOneRoundTripLater() {
        SimulatedLink link = new SimulatedLink(100_000_000, Duration.ofMillis(100), VirtualTimeScheduler.create());
        long last = 0;
        for (int i = 0; i < 10; i++) {
            last = link.receiptAt(0, MIB);
        }
        // 10 MiB over 100 MB/s is 104.9 ms on the wire, then the round trip
        assertThat(last).isBetween(204_800_000L, 204_900_000L);
        assertThat(link.bytesSent()).isEqualTo(10 * MIB);
        // an idle link sends at once: the next send leaves when it is made
        assertThat(link.receiptAt(1_000_000_000L, 1_000_000)).isEqualTo(1_110_000_000L);
    }

    @Test
    void tenMebibytesOverAHundredMegabytesPerSecondAndAHundredMillisecondsTakeAboutTwoTenthsOfASecond() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        Layout one = Layout.initial(1, 1, 0);
        MemorySegments source = new MemorySegments("a", one, clock);
        MemorySegments remote = new MemorySegments("b", one, clock);
        SimulatedLink link = new SimulatedLink(100_000_000, Duration.ofMillis(100), clock);
        ProducerSession session = link.over(remote.asRemote()).open(0, "p");
        // an entry of about 1 MiB, sent ten times from ten positions
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            messages.add(Message.unkeyed(new byte[(int) MIB / 16 - 64]));
        }
        source.produce(messages, Compression.NONE);
        StoredEntry stored = source.log(0).entries().get(0);
        Entry entry = Entry.parse(stored.bytes());
        List<Long> receipts = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            session.send(entry, SourcePosition.of(0, i))
                    .subscribe(r -> receipts.add(clock.now(TimeUnit.MILLISECONDS)));
        }
        clock.advanceTimeBy(Duration.ofMillis(109));
        assertThat(receipts).as("nothing back before one entry's wire time and the round trip").isEmpty();
        clock.advanceTimeBy(Duration.ofMillis(100));
        assertThat(receipts).hasSize(10);
        assertThat(receipts.get(0)).as("the first: one entry on the wire, then the round trip").isEqualTo(110);
        assertThat(receipts.get(9)).isBetween(200L, 209L);
        assertThat(remote.log(0).size()).isEqualTo(10);
    }
}
