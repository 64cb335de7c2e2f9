package io.verbatim.model.entry;

import com.google.protobuf.ByteString;
import io.verbatim.model.Generators;
import io.verbatim.model.proto.KeyValue;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.model.proto.SingleMessageMetadata;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;

/**
 * A message in a neutral form both Verbatim and Pulsar can be asked to write and read, so the two
 * sides are compared field by field.
 */
record Sample(String key, byte[] orderingKey, Map<String, String> properties, long eventTime, long sequenceId,
        byte[] payload) {

    static List<Sample> randomBatch(Random r, int count, int payloadBytes) {
        List<Sample> samples = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            samples.add(random(r, i, payloadBytes));
        }
        return samples;
    }

    static Sample random(Random r, long sequenceId, int payloadBytes) {
        String key = r.nextInt(5) == 0 ? null : Generators.key(r);
        byte[] orderingKey = r.nextInt(4) == 0 ? ("ok-" + r.nextInt(100)).getBytes(StandardCharsets.UTF_8) : null;
        Map<String, String> props = new LinkedHashMap<>();
        for (int i = r.nextInt(3); i > 0; i--) {
            props.put("p" + r.nextInt(10), Generators.key(r));
        }
        return new Sample(key, orderingKey, props, r.nextInt(3) == 0 ? 0 : 1_700_000_000_000L + r.nextInt(1000),
                sequenceId, payload(r, payloadBytes));
    }

    /** Half text-like (compressible), half random: codecs see both. */
    static byte[] payload(Random r, int size) {
        byte[] bytes = new byte[size];
        String text = "{\"order\":12345,\"item\":\"widget\",\"price\":9.99,\"note\":\"";
        for (int i = 0; i < size; i++) {
            bytes[i] = i < size / 2 ? (byte) text.charAt(i % text.length()) : (byte) r.nextInt(256);
        }
        return bytes;
    }

    Message toMessage() {
        SingleMessageMetadata.Builder md = SingleMessageMetadata.newBuilder().setSequenceId(sequenceId)
                .setPayloadSize(payload.length);
        if (key != null) {
            md.setPartitionKey(key);
        }
        if (orderingKey != null) {
            md.setOrderingKey(ByteString.copyFrom(orderingKey));
        }
        if (eventTime != 0) {
            md.setEventTime(eventTime);
        }
        properties.forEach((k, v) -> md.addProperties(KeyValue.newBuilder().setKey(k).setValue(v)));
        return new Message(md.build(), ByteBuffer.wrap(payload));
    }

    static Sample of(Message m) {
        Map<String, String> props = new LinkedHashMap<>();
        m.metadata().getPropertiesList().forEach(kv -> props.put(kv.getKey(), kv.getValue()));
        return new Sample(m.key().orElse(null), m.orderingKey().orElse(null), props, m.metadata().getEventTime(),
                m.metadata().getSequenceId(), m.payloadBytes());
    }

    /** The outer metadata of a single-message entry holding this sample. */
    MessageMetadata toSingleMetadata(String producer) {
        MessageMetadata.Builder md = MessageMetadata.newBuilder().setProducerName(producer).setSequenceId(sequenceId)
                .setPublishTime(1_700_000_000_000L);
        if (key != null) {
            md.setPartitionKey(key);
        }
        if (orderingKey != null) {
            md.setOrderingKey(ByteString.copyFrom(orderingKey));
        }
        if (eventTime != 0) {
            md.setEventTime(eventTime);
        }
        properties.forEach((k, v) -> md.addProperties(KeyValue.newBuilder().setKey(k).setValue(v)));
        return md.build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Sample s && Objects.equals(key, s.key) && Arrays.equals(orderingKey, s.orderingKey)
                && properties.equals(s.properties) && eventTime == s.eventTime && sequenceId == s.sequenceId
                && Arrays.equals(payload, s.payload);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "Sample[key=" + key + ", seq=" + sequenceId + ", props=" + properties + ", payload=" + payload.length
                + "B]";
    }
}
