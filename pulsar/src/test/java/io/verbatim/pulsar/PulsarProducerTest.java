package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * An application's produce calls on a real broker: a call its caller abandons (an HTTP client that reset its
 * connection) never leaves the producer of a segment broken for the calls after it.
 */
class PulsarProducerTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final long SEED = Long.getLong("verbatim.seed", System.nanoTime());
    private static int run;
    private PulsarFixture east;
    private PulsarSegments segments;
    private PulsarProducer producer;
    private String topic;

    @AfterEach
    void close() {
        if (producer != null) {
            producer.close();
        }
        if (east != null) {
            east.close();
        }
    }

    private void open() {
        east = new PulsarFixture("public/producer-" + ++run + "-" + ProcessHandle.current().pid());
        topic = east.newTopic("orders");
        segments = PulsarSegments.open(east.storage, topic, List.of(), Layout.initial(1, 4, 0), Schedulers.parallel(),
                Duration.ofMillis(100)).block(WAIT);
        producer = new PulsarProducer(east.storage, segments, "app-" + run);
    }

    /**
     * The fault suite's abandoned calls: the first call after a split makes each child's producer, and its caller
     * goes away while they are being made. The calls after it are stored, each message once.
     */
    @Test
    void aCallCancelledWhileItsSegmentsProducersAreMadeLeavesLaterCallsProducing() throws Exception {
        System.out.println("seed " + SEED + " (replay: -Dverbatim.seed=" + SEED + ")");
        Random random = new Random(SEED);
        open();
        List<String> produced = new ArrayList<>(produce(calls("before", 1, 20)));
        assertThat(segments.adopt(next(segments.layout(), Mutation.split(0))).block(WAIT)).isTrue();

        // cancelled as soon as it is subscribed: each child's producer is being made (a broker round trip)
        producer.produce(calls("abandoned-0", 1, 20).get(0), Compression.NONE).subscribe().dispose();
        // and, as the suite's client does, a few more reset 0-20 ms after they were sent
        for (int i = 1; i <= 5; i++) {
            abandon(calls("abandoned-" + i, 1, 20).get(0), random.nextInt(21));
        }
        produced.addAll(produce(calls("after", 3, 20)));

        assertThat(storedPayloads()).as("every acknowledged message, once (abandoned ones may be stored too)")
                .containsAll(produced)
                .doesNotHaveDuplicates();
    }

    /** A call cancelled while its messages are on the way to the broker leaves the cached producer sending. */
    @Test
    void aCallCancelledWhileItSendsLeavesLaterCallsProducing() throws Exception {
        System.out.println("seed " + SEED + " (replay: -Dverbatim.seed=" + SEED + ")");
        Random random = new Random(SEED);
        open();
        List<String> produced = new ArrayList<>(produce(calls("before", 1, 20)));
        for (int i = 0; i < 10; i++) {
            abandon(calls("abandoned-" + i, 1, 500).get(0), random.nextInt(6));
        }
        produced.addAll(produce(calls("after", 3, 20)));

        assertThat(storedPayloads()).containsAll(produced).doesNotHaveDuplicates();
    }

    /** Produces each call in turn, every one acknowledged; the payloads sent. */
    private List<String> produce(List<List<Message>> calls) {
        List<String> payloads = new ArrayList<>();
        for (List<Message> call : calls) {
            List<SourcePosition> positions = producer.produce(call, Compression.NONE).block(WAIT);
            assertThat(positions).as("positions of a call of %d", call.size()).isNotEmpty();
            call.forEach(m -> payloads.add(new String(m.payloadBytes(), StandardCharsets.UTF_8)));
        }
        return payloads;
    }

    /** Sends {@code call} and cancels it {@code afterMillis} later (or as it completes, if that is sooner). */
    private void abandon(List<Message> call, int afterMillis) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        Disposable d = producer.produce(call, Compression.NONE).doFinally(s -> done.countDown())
                .subscribe(p -> { }, e -> { });
        done.await(afterMillis, TimeUnit.MILLISECONDS);
        d.dispose();
    }

    /** {@code count} calls of {@code size} messages over 16 keys, payloads {@code label-call-index}. */
    private static List<List<Message>> calls(String label, int count, int size) {
        List<List<Message>> calls = new ArrayList<>();
        for (int c = 0; c < count; c++) {
            List<Message> call = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                call.add(Message.of("k" + i % 16, (label + "-" + c + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            calls.add(call);
        }
        return calls;
    }

    /** Every payload stored in every segment of the layout held now. */
    private List<String> storedPayloads() {
        List<String> payloads = new ArrayList<>();
        for (Segment s : segments.layout().segments().values()) {
            for (Entry e : east.stored(topic, s)) {
                Entries.messages(e).forEach(m -> payloads.add(new String(m.payloadBytes(), StandardCharsets.UTF_8)));
            }
        }
        return payloads;
    }

    private static Layout next(Layout current, Mutation m) {
        return current.apply(m, current.epoch(), System.currentTimeMillis()).layoutOrThrow();
    }
}
