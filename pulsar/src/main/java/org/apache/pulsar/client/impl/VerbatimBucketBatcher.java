package org.apache.pulsar.client.impl;

import io.verbatim.model.Buckets;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Stamp;
import java.io.IOException;
import java.util.Optional;
import org.apache.pulsar.client.api.BatchMessageContainer;
import org.apache.pulsar.client.api.BatcherBuilder;
import org.apache.pulsar.common.api.proto.KeyValue;
import org.apache.pulsar.common.api.proto.MessageMetadata;

/**
 * A PIP-486 batcher for a producer on one segment: a batch holds messages of one bucket of the segment
 * ({@code hashB} of the ordering key, else the key, else 0), and each entry is stamped with the smallest
 * and largest {@code hashB} in it. Pulsar 4.0's metadata has no fields for the stamp, so it goes as the
 * {@link Stamp#PROPERTY} property of the entry's outer metadata (of the message's own metadata when the
 * entry is one message, which Pulsar then sends unbatched).
 *
 * <p>A message of another bucket closes the batch, so entries follow each other in sequence-id order, as
 * the broker's deduplication needs (a batcher that keeps one batch per bucket open, as Pulsar's key-based
 * one does per key, sends lower sequence ids after higher ones, and a deduplicated namespace drops them).
 * Batches are as large as runs of one bucket: a producer that sends a bucket's messages together (a key's
 * order is kept by any order of buckets) gets full batches.
 *
 * <p>It lives in Pulsar's client package because the batch container it builds on is internal there. Give
 * it to {@code ProducerBuilder.batcherBuilder} (or the reactive sender's) with the segment's buckets.
 */
public final class VerbatimBucketBatcher implements BatcherBuilder {
    private static final long serialVersionUID = 1L;
    private final int bucketCount;

    public VerbatimBucketBatcher(Buckets buckets) {
        this.bucketCount = buckets.count();
    }

    @Override
    public BatchMessageContainer build() {
        return new BucketBatch(Buckets.of(bucketCount));
    }

    /** The hashB that picks a message's bucket, as Verbatim's model computes it. */
    static int hashB(MessageImpl<?> msg) {
        Optional<String> key = msg.hasKey() ? Optional.of(msg.getKey()) : Optional.empty();
        Optional<byte[]> ordering = msg.hasOrderingKey() ? Optional.of(msg.getOrderingKey()) : Optional.empty();
        return KeyHash.hashBOf(KeyHash.ofMessage(key, ordering));
    }

    /** One bucket's run of messages, stamped when it becomes an entry. */
    private static final class BucketBatch extends BatchMessageContainerImpl {
        private final Buckets buckets;

        BucketBatch(Buckets buckets) {
            this.buckets = buckets;
        }

        @Override
        public boolean haveEnoughSpace(MessageImpl<?> msg) {
            if (!messages.isEmpty() && buckets.bucketOf(hashB(msg)) != buckets.bucketOf(hashB(messages.get(0)))) {
                return false; // another bucket: this batch goes, the message starts the next
            }
            return super.haveEnoughSpace(msg);
        }

        @Override
        public ProducerImpl.OpSendMsg createOpSendMsg() throws IOException {
            if (!messages.isEmpty()) {
                Stamp stamp = Stamp.of(hashB(messages.get(0)));
                for (MessageImpl<?> m : messages) {
                    stamp = stamp.including(hashB(m));
                }
                // one message goes unbatched, with its own metadata; a batch, with the batch's
                stamp(messages.size() == 1 ? messages.get(0).getMessageBuilder() : messageMetadata, stamp);
            }
            return super.createOpSendMsg();
        }

        private static void stamp(MessageMetadata md, Stamp stamp) {
            for (KeyValue kv : md.getPropertiesList()) {
                if (kv.getKey().equals(Stamp.PROPERTY)) {
                    kv.setValue(stamp.toProperty()); // a retried batch is stamped again, not twice
                    return;
                }
            }
            md.addProperty().setKey(Stamp.PROPERTY).setValue(stamp.toProperty());
        }
    }
}
