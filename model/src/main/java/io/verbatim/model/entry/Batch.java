package io.verbatim.model.entry;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.model.entry.EntryFormatException.Problem;
import io.verbatim.model.proto.SingleMessageMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Pulsar's batch payload before compression: for each message, a 4-byte big-endian size of its
 * {@code SingleMessageMetadata}, the metadata, then {@code payload_size} bytes of payload.
 */
public final class Batch {
    private Batch() {
    }

    /** The uncompressed batch payload of {@code messages}, in order. */
    public static ByteBuffer encode(List<Message> messages) {
        return encode(messages, new byte[encodedSize(messages)]);
    }

    /** How many bytes {@link #encode} writes for {@code messages}. */
    static int encodedSize(List<Message> messages) {
        int size = 0;
        for (Message m : messages) {
            size += 4 + m.metadata().getSerializedSize() + m.payload().remaining();
        }
        return size;
    }

    /**
     * The batch payload of {@code messages} written at the start of {@code into}, which holds at least
     * {@link #encodedSize} bytes: a buffer over those bytes.
     */
    static ByteBuffer encode(List<Message> messages, byte[] into) {
        ByteBuffer out = ByteBuffer.wrap(into, 0, encodedSize(messages)).slice();
        for (Message m : messages) {
            int mdSize = m.metadata().getSerializedSize();
            out.putInt(mdSize);
            try {
                CodedOutputStream cos = CodedOutputStream.newInstance(out.array(), out.position(), mdSize);
                m.metadata().writeTo(cos);
                cos.checkNoSpaceLeft();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            out.position(out.position() + mdSize);
            out.put(m.payload().duplicate());
        }
        return out.flip();
    }

    /**
     * Splits an uncompressed batch payload into exactly {@code count} messages.
     *
     * @throws EntryFormatException when a size runs past the end, a metadata is malformed, or the
     *         payload holds fewer or more than {@code count} messages
     */
    public static List<Message> decode(ByteBuffer uncompressed, int count) {
        if (count < 1) {
            throw new EntryFormatException(Problem.BATCH_COUNT_MISMATCH, "batch count " + count + " is below 1");
        }
        ByteBuffer in = uncompressed.duplicate();
        List<Message> messages = new ArrayList<>(Math.min(count, 1024));
        for (int i = 0; i < count; i++) {
            if (!in.hasRemaining()) {
                throw new EntryFormatException(Problem.BATCH_COUNT_MISMATCH, "batch count says " + count
                        + " messages but the payload ends after " + i);
            }
            messages.add(next(in, i, count));
        }
        if (in.hasRemaining()) {
            throw new EntryFormatException(Problem.BATCH_COUNT_MISMATCH, "batch count says " + count + " messages but "
                    + in.remaining() + " bytes follow the last one");
        }
        return messages;
    }

    private static Message next(ByteBuffer in, int index, int count) {
        if (in.remaining() < 4) {
            throw new EntryFormatException(Problem.TRUNCATED, where(index, count) + ": " + in.remaining()
                    + " bytes left where a 4-byte metadata size belongs");
        }
        int mdSize = in.getInt();
        if (mdSize < 0 || mdSize > in.remaining()) {
            throw new EntryFormatException(Problem.TRUNCATED, where(index, count) + ": metadata size " + mdSize
                    + " but " + in.remaining() + " bytes left");
        }
        SingleMessageMetadata md;
        try {
            md = SingleMessageMetadata.parseFrom(in.slice().limit(mdSize));
        } catch (InvalidProtocolBufferException e) {
            throw new EntryFormatException(Problem.MALFORMED_METADATA, where(index, count) + ": " + e.getMessage(), e);
        }
        in.position(in.position() + mdSize);
        int payloadSize = md.getPayloadSize();
        if (payloadSize < 0 || payloadSize > in.remaining()) {
            throw new EntryFormatException(Problem.TRUNCATED, where(index, count) + ": payload_size " + payloadSize
                    + " but " + in.remaining() + " bytes left");
        }
        ByteBuffer payload = in.slice().limit(payloadSize);
        in.position(in.position() + payloadSize);
        return new Message(md, payload);
    }

    /** Which message a problem is in; built only when there is one (decoding runs per message). */
    private static String where(int index, int count) {
        return "batch message " + index + " of " + count;
    }
}
