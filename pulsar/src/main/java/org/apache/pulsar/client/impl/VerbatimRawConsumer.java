package org.apache.pulsar.client.impl;

import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.conf.ConsumerConfigurationData;
import org.apache.pulsar.common.api.proto.CommandMessage;
import org.apache.pulsar.common.api.proto.MessageIdData;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.shade.io.netty.buffer.ByteBuf;

/**
 * A consumer of a durable subscription that hands over each entry as Pulsar stored it: the bytes the
 * broker dispatched (magic, checksum, metadata, the possibly compressed batch), never unpacked into
 * messages. It is what Pulsar's own compactor and geo-replicator read with, written for Verbatim's cursor.
 *
 * <p>It lives in Pulsar's client package because the one hook it needs, {@code messageReceived}, is
 * package-private there. It keeps nothing itself: each entry goes to the {@link Receiver} on the client's
 * I/O thread, already copied out of the connection's buffer, and the receiver gives the entry's flow
 * permits back with {@link #release} once it has passed the entry on. So the broker never sends more than
 * the receiver queue's worth of messages ahead of what the receiver took.
 */
public final class VerbatimRawConsumer extends ConsumerImpl<byte[]> {

    /** Where the stored entries go. Called on the client's I/O threads; must not block. */
    public interface Receiver {
        /**
         * One stored entry.
         *
         * @param from the consumer it came through, whose {@link #release} takes its permits back
         * @param messages how many messages the entry holds (the flow permits it took)
         * @param connection the connection it came over, to hand back to {@link #release}
         */
        void entry(VerbatimRawConsumer from, long ledgerId, long entryId, byte[] bytes, int messages,
                Object connection);

        /** The topic is terminated and every entry of it is acknowledged on this subscription. */
        void endOfTopic();

        /**
         * The consumer is subscribed again over a new connection: the broker sends again, from the
         * mark-delete position, whatever it sent before and was not acknowledged; the permits of entries still
         * held from the old connection are void. Pulsar calls it at the first subscribe too.
         */
        void reconnected();

        /**
         * Pulsar closed the consumer for an error it does not retry (the topic deleted, say): nothing more comes
         * through it.
         */
        default void failed(Throwable error) {
        }
    }

    /**
     * The configuration, carrying the receiver: the consumer's constructor starts connecting, and the broker's
     * first answers (connected, terminated, the first entries) may arrive on an I/O thread before a field of this
     * class is assigned; the configuration is assigned before that.
     */
    private static final class Conf extends ConsumerConfigurationData<byte[]> {
        private static final long serialVersionUID = 1L;
        private final transient Receiver receiver;

        Conf(Receiver receiver) {
            this.receiver = receiver;
        }
    }

    private VerbatimRawConsumer(PulsarClientImpl client, Conf conf, CompletableFuture<Consumer<byte[]>> subscribed) {
        super(client, conf.getSingleTopic(), conf, client.externalExecutorProvider(),
                TopicName.getPartitionIndex(conf.getSingleTopic()), false, false, subscribed, MessageId.earliest,
                0, Schema.BYTES, null, true);
    }

    private Receiver receiver() {
        return ((Conf) conf).receiver;
    }

    /**
     * Subscribes {@code subscription} (exclusive, durable; created at {@code initial} if new) on
     * {@code topic}, with at most {@code receiverQueueSize} messages sent ahead of what was released.
     */
    public static CompletableFuture<VerbatimRawConsumer> subscribe(PulsarClient client, String topic,
            String subscription, SubscriptionInitialPosition initial, int receiverQueueSize, Receiver receiver) {
        Conf conf = new Conf(receiver);
        conf.getTopicNames().add(topic);
        conf.setSubscriptionName(subscription);
        conf.setSubscriptionType(SubscriptionType.Exclusive);
        conf.setSubscriptionInitialPosition(initial);
        conf.setReceiverQueueSize(receiverQueueSize);
        conf.setAckReceiptEnabled(true); // an acknowledgement completes once the broker took it
        conf.setAcknowledgementsGroupTimeMicros(0); // the cursor coalesces its own acknowledgements
        CompletableFuture<Consumer<byte[]>> subscribed = new CompletableFuture<>();
        VerbatimRawConsumer consumer = new VerbatimRawConsumer((PulsarClientImpl) client, conf, subscribed);
        return subscribed.thenApply(c -> consumer);
    }

    /** Gives back the permits of an entry the receiver passed on, if it came over the current connection. */
    public void release(int messages, Object connection) {
        ClientCnx current = cnx();
        if (current != null && current == connection) {
            increaseAvailablePermits(current, messages);
        }
    }

    /** Acknowledges the one entry {@code ledgerId:entryId}; completes on the broker's receipt. */
    public CompletableFuture<Void> acknowledgeOne(long ledgerId, long entryId) {
        return acknowledgeAsync(new MessageIdImpl(ledgerId, entryId, getPartitionIndex()));
    }

    /** Acknowledges everything up to and including {@code ledgerId:entryId}; completes on the broker's receipt. */
    public CompletableFuture<Void> acknowledgeUpTo(long ledgerId, long entryId) {
        return acknowledgeCumulativeAsync(new MessageIdImpl(ledgerId, entryId, getPartitionIndex()));
    }

    @Override
    void messageReceived(CommandMessage command, ByteBuf headersAndPayload, ClientCnx cnx) {
        State state = getState();
        if (state == State.Closing || state == State.Closed) {
            return;
        }
        MessageIdData id = command.getMessageId();
        // a broker that exposes its entry metadata puts it in front of the stored entry: not the entry's bytes
        ByteBuf stored = Commands.skipBrokerEntryMetadataIfExist(headersAndPayload.duplicate());
        int messages = 1;
        try {
            MessageMetadata md = Commands.parseMessageMetadata(stored.duplicate());
            messages = Math.max(1, md.getNumMessagesInBatch());
        } catch (RuntimeException unreadable) {
            // the cursor's parse names what is wrong with it; one permit is what the broker counted then
        }
        byte[] bytes = new byte[stored.readableBytes()];
        stored.getBytes(stored.readerIndex(), bytes);
        receiver().entry(this, id.getLedgerId(), id.getEntryId(), bytes, messages, cnx);
    }

    @Override
    protected void consumerIsReconnectedToBroker(ClientCnx cnx, int currentQueueSize) {
        super.consumerIsReconnectedToBroker(cnx, currentQueueSize);
        receiver().reconnected();
    }

    @Override
    protected void closeWhenReceivedUnrecoverableError(Throwable error, ClientCnx cnx) {
        super.closeWhenReceivedUnrecoverableError(error, cnx);
        receiver().failed(error); // Pulsar closes the consumer quietly: the read would wait for ever
    }

    @Override
    void setTerminated() {
        super.setTerminated();
        receiver().endOfTopic();
    }
}
