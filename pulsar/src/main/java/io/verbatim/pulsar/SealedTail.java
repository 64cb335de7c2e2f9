package io.verbatim.pulsar;

import io.verbatim.model.entry.SourcePosition;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.pulsar.client.api.ConsumerCryptoFailureAction;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.MessageIdImpl;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a sealed segment's topic stored of one producer's refused sends, read from the topic itself: it is
 * terminated, so what it holds is final. A non-durable reader from just after the producer's last acknowledged
 * entry to the topic's end; a message of the producer's name with one of the sequence ids asked is stored, at its
 * entry.
 */
final class SealedTail {
    private SealedTail() {
    }

    /**
     * The entries of {@code topic} after {@code after} (from the first if empty) that hold a message of
     * {@code producerName} with one of {@code sequenceIds}: sequence id to entry. Call it once the topic is
     * terminated (the layout that seals it is held): before, the broker may not show all it will store. Fails naming
     * the topic if it cannot be read within the operation timeout.
     */
    static Mono<Map<Long, SourcePosition>> stored(PulsarStorage storage, String topic, String producerName,
            Optional<SourcePosition> after, Set<Long> sequenceIds) {
        MessageId start = after.<MessageId>map(p -> new MessageIdImpl(p.ledgerId(), p.entryId(), -1))
                .orElse(MessageId.earliest);
        return Mono.usingWhen(
                        Mono.fromFuture(() -> storage.client().newReader(Schema.BYTES).topic(topic)
                                .startMessageId(start).cryptoFailureAction(ConsumerCryptoFailureAction.CONSUME)
                                .createAsync()),
                        reader -> toEnd(reader)
                                .filter(m -> producerName.equals(m.getProducerName())
                                        && sequenceIds.contains(m.getSequenceId()))
                                .take(sequenceIds.size())
                                .collectMap(Message::getSequenceId,
                                        m -> SegmentSends.position(m.getMessageId()).orElseThrow()),
                        reader -> Mono.fromFuture(reader::closeAsync).onErrorResume(e -> Mono.empty()))
                .timeout(storage.settings().operationTimeout())
                .onErrorMap(e -> new PulsarStorageException("cannot read what the sealed segment " + topic
                        + " stored of " + producerName + " (sequence ids " + sequenceIds + ") after " + after
                        .map(SourcePosition::toString).orElse("its first entry"), PulsarStorage.cause(e)));
    }

    /** Every message of the reader's topic from its start to the end. */
    static Flux<Message<byte[]>> toEnd(Reader<byte[]> reader) {
        return Mono.defer(() -> Mono.fromFuture(reader.hasMessageAvailableAsync()))
                .flatMap(more -> more ? Mono.fromFuture(reader.readNextAsync()).map(Optional::of)
                        : Mono.just(Optional.<Message<byte[]>>empty()))
                .repeat()
                .takeWhile(Optional::isPresent)
                .map(Optional::get);
    }
}
