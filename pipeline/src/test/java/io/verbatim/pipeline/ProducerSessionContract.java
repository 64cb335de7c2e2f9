package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.ProducerSession.Receipt;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * What every {@link ProducerSession} must do, whatever the destination stores in: ordered sends, the
 * entry stored as sent, the destination's deduplication on the source position per producer, and a
 * session that breaks for good at its first failure. Each implementation runs it through a subclass.
 */
public abstract class ProducerSessionContract {
    private static final Duration WAIT = Duration.ofSeconds(15);
    protected static final String SOURCE = "east";

    /** One fresh, empty, active destination segment. */
    protected interface Destination {
        ProducerSession open(String producerName);

        /** The entries the destination stored, in order, parsed. */
        List<Entry> stored();

        void seal();
    }

    protected abstract Destination newDestination();

    @Test
    void pipelinedSendsAreStoredInCallOrderWithTheirBytes() {
        Destination d = newDestination();
        ProducerSession session = d.open("pulsar.repl.east.1");
        List<Entry> sent = new ArrayList<>();
        List<Mono<Receipt>> receipts = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Entry e = stamped(i % 3 == 0 ? batch(i, 5, CompressionType.LZ4) : batch(i, 1, CompressionType.NONE),
                    SourcePosition.of(1, i));
            sent.add(e);
            receipts.add(session.send(e, SourcePosition.of(1, i))); // issued now, in order, none awaited
        }
        List<Receipt> got = Flux.mergeSequential(receipts).collectList().block(WAIT);
        assertThat(got).hasSize(20).containsOnly(Receipt.PERSISTED);
        List<Entry> stored = d.stored();
        assertThat(stored).hasSize(20);
        for (int i = 0; i < 20; i++) {
            Entry s = stored.get(i);
            Entry e = sent.get(i);
            assertThat(s.payload()).as("payload bytes of entry %d", i).isEqualTo(e.payload());
            assertThat(s.metadata().getProducerName()).isEqualTo(e.metadata().getProducerName());
            assertThat(s.metadata().getSequenceId()).isEqualTo(e.metadata().getSequenceId());
            assertThat(s.metadata().getNumMessagesInBatch()).isEqualTo(e.metadata().getNumMessagesInBatch());
            assertThat(s.metadata().getCompression()).isEqualTo(e.metadata().getCompression());
            assertThat(s.metadata().getReplicatedFrom()).isEqualTo(SOURCE);
        }
        session.dispose();
    }

    @Test
    void aRepeatFromALaterSessionIsADuplicateAndStoredOnce() {
        Destination d = newDestination();
        ProducerSession first = d.open("pulsar.repl.east.2");
        for (int i = 0; i < 3; i++) {
            assertThat(send(first, i)).isEqualTo(Receipt.PERSISTED);
        }
        first.dispose();
        ProducerSession again = d.open("pulsar.repl.east.2"); // a restarted replicator
        assertThat(send(again, 1)).isEqualTo(Receipt.DUPLICATE);
        assertThat(send(again, 2)).isEqualTo(Receipt.DUPLICATE);
        assertThat(send(again, 3)).isEqualTo(Receipt.PERSISTED);
        again.dispose();
        assertThat(d.stored()).hasSize(4);
    }

    @Test
    void eachProducerIsDeduplicatedOnItsOwn() {
        Destination d = newDestination();
        ProducerSession a = d.open("pulsar.repl.east.3");
        ProducerSession b = d.open("pulsar.repl.east.4"); // another source segment: the same positions are news
        assertThat(send(a, 0)).isEqualTo(Receipt.PERSISTED);
        assertThat(send(b, 0)).isEqualTo(Receipt.PERSISTED);
        assertThat(send(a, 1)).isEqualTo(Receipt.PERSISTED);
        assertThat(send(b, 1)).isEqualTo(Receipt.PERSISTED);
        a.dispose();
        b.dispose();
        assertThat(d.stored()).hasSize(4);
    }

    @Test
    void partsOfOneEntryThenTheWholeNextOneAreAllStored() {
        Destination d = newDestination();
        ProducerSession session = d.open("pulsar.repl.east.5");
        for (int part = 0; part < 3; part++) {
            SourcePosition p = SourcePosition.of(1, 0).withPart(part);
            assertThat(session.send(stamped(batch(part, 2, CompressionType.NONE), p), p).block(WAIT))
                    .as("part %d", part).isEqualTo(Receipt.PERSISTED);
        }
        assertThat(send(session, 1)).isEqualTo(Receipt.PERSISTED);
        session.dispose();
        ProducerSession again = d.open("pulsar.repl.east.5");
        SourcePosition part1 = SourcePosition.of(1, 0).withPart(1);
        assertThat(again.send(stamped(batch(1, 2, CompressionType.NONE), part1), part1).block(WAIT))
                .isEqualTo(Receipt.DUPLICATE);
        again.dispose();
        assertThat(d.stored()).hasSize(4);
    }

    @Test
    void aSealedDestinationRefusesAndTheSessionStaysBroken() {
        Destination d = newDestination();
        ProducerSession session = d.open("pulsar.repl.east.6");
        assertThat(send(session, 0)).isEqualTo(Receipt.PERSISTED);
        d.seal();
        StepVerifier.create(session.send(stamped(batch(1, 1, CompressionType.NONE), SourcePosition.of(1, 1)),
                        SourcePosition.of(1, 1)))
                .expectErrorMatches(RemoteException::isSealed)
                .verify(WAIT);
        StepVerifier.create(session.send(stamped(batch(2, 1, CompressionType.NONE), SourcePosition.of(1, 2)),
                        SourcePosition.of(1, 2)))
                .expectErrorMatches(e -> e instanceof RemoteException r && r.kind() == RemoteException.Kind.SESSION_BROKEN)
                .verify(WAIT);
        session.dispose();
        assertThat(d.stored()).hasSize(1);
    }

    @Test
    void aSessionOpenedOnASealedDestinationIsRefusedAsSealed() {
        Destination d = newDestination();
        d.seal();
        ProducerSession session = d.open("pulsar.repl.east.7");
        StepVerifier.create(session.send(stamped(batch(0, 1, CompressionType.NONE), SourcePosition.of(1, 0)),
                        SourcePosition.of(1, 0)))
                .expectErrorMatches(RemoteException::isSealed)
                .verify(WAIT);
        session.dispose();
    }

    @Test
    void afterDisposeEverySendFails() {
        Destination d = newDestination();
        ProducerSession session = d.open("pulsar.repl.east.8");
        session.dispose();
        assertThat(session.isDisposed()).isTrue();
        StepVerifier.create(session.send(stamped(batch(0, 1, CompressionType.NONE), SourcePosition.of(1, 0)),
                        SourcePosition.of(1, 0)))
                .expectErrorMatches(e -> e instanceof RemoteException r && r.kind() == RemoteException.Kind.SESSION_BROKEN)
                .verify(WAIT);
        assertThat(d.stored()).isEmpty();
    }

    private static Receipt send(ProducerSession session, long entryId) {
        SourcePosition p = SourcePosition.of(1, entryId);
        return session.send(stamped(batch((int) entryId, 1, CompressionType.NONE), p), p).block(WAIT);
    }

    /** An entry as a replicator forwards it: stamped with the source and its position. */
    protected static Entry stamped(Entry entry, SourcePosition position) {
        return entry.restamp(new ReplicationStamp(SOURCE, position));
    }

    /** An application's entry: {@code messages} keyed messages, batched and compressed as asked. */
    protected static Entry batch(int n, int messages, CompressionType codec) {
        MessageMetadata template = MessageMetadata.newBuilder().setProducerName("app-" + n % 2).setSequenceId(n)
                .setPublishTime(1_700_000_000_000L + n).build();
        List<Message> ms = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            ms.add(Message.of("k" + i, ("order " + n + "/" + i + " " + "x".repeat(100)).getBytes(StandardCharsets.UTF_8)));
        }
        return messages == 1 && codec == CompressionType.NONE
                ? Entries.single(template, ms.get(0).payload(), codec)
                : Entries.batch(template, ms, codec);
    }
}
