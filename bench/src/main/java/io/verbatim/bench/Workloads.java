package io.verbatim.bench;

import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/** The shared inputs of the benchmarks: realistic, seeded, built once per trial. */
final class Workloads {
    static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("bench-producer")
            .setSequenceId(1).setPublishTime(1_700_000_000_000L).build();
    private static final String[] WORDS = {"order", "widget", "shipped", "pending", "customer", "warehouse",
        "eu-west", "us-east", "priority", "express", "refund", "invoice"};

    private Workloads() {
    }

    /** A JSON-like record of about {@code size} bytes: compresses about 2-3x, as typical event payloads. */
    static byte[] record(Random r, int size) {
        StringBuilder sb = new StringBuilder(size + 64).append('{');
        while (sb.length() < size - 1) {
            sb.append('"').append(WORDS[r.nextInt(WORDS.length)]).append("\":");
            if (r.nextBoolean()) {
                sb.append(r.nextInt(1_000_000));
            } else {
                sb.append('"').append(Long.toHexString(r.nextLong())).append('"');
            }
            sb.append(',');
        }
        byte[] bytes = sb.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] out = Arrays.copyOf(bytes, size);
        out[size - 1] = '}';
        return out;
    }

    /** {@code count} keyed messages of {@code size} bytes each. */
    static List<Message> messages(long seed, int count, int size) {
        Random r = new Random(seed);
        List<Message> messages = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            messages.add(Message.of("customer-" + r.nextInt(100_000), record(r, size)));
        }
        return messages;
    }

    /** A stored batch entry of 100 x 1 KiB messages. */
    static Entry batch(CompressionType codec) {
        return Entries.batch(TEMPLATE, messages(42, 100, 1024), codec);
    }
}
