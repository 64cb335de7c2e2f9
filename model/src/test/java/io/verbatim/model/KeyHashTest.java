package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Random;
import org.apache.pulsar.common.util.Murmur3_32Hash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KeyHashTest {

    @ParameterizedTest
    @CsvSource({
        "'',      00000000, 0000, 0000",
        "hello,   248bfa47, 248b, fa47",
        "foo,     f6a5c420, f6a5, c420",
        "key-1,   98b115a0, 98b1, 15a0",
        "a,       3c2569b2, 3c25, 69b2",
    })
    void matchesReferenceVectors(String key, String raw, String segmentHash, String hashB) {
        KeyHash h = KeyHash.of(key);
        assertThat(h.raw()).isEqualTo(Integer.parseUnsignedInt(raw, 16));
        assertThat(h.segmentHash()).isEqualTo(Integer.parseInt(segmentHash, 16));
        assertThat(h.hashB()).isEqualTo(Integer.parseInt(hashB, 16));
    }

    @Test
    void routesByTheUnmaskedHash() {
        // With Pulsar's masked makeHash the high half of "foo" would be 0x76a5.
        assertThat(KeyHash.of("foo").segmentHash()).isEqualTo(0xf6a5);
    }

    @Test
    void agreesWithPulsarAndGuavaOnGeneratedKeys() {
        Property.forAll("hash agrees with Pulsar and Guava", 0x5eed_0001L, 100_000, r -> {
            String key = Generators.key(r);
            byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
            int raw = KeyHash.of(key).raw();
            assertThat(raw & Integer.MAX_VALUE)
                    .as("low 31 bits vs Pulsar's Murmur3_32Hash for %s", key)
                    .isEqualTo(Murmur3_32Hash.getInstance().makeHash(bytes));
            assertThat(raw).as("raw vs Guava murmur3_32_fixed for %s", key)
                    .isEqualTo(Hashing.murmur3_32_fixed().hashBytes(bytes).asInt());
        });
    }

    @Test
    void agreesWithGuavaOnRandomBytesOfEveryTailLength() {
        Random r = new Random(7);
        for (int length = 0; length < 64; length++) {
            byte[] bytes = new byte[length];
            r.nextBytes(bytes);
            assertThat(KeyHash.ofBytes(bytes).raw()).isEqualTo(Hashing.murmur3_32_fixed().hashBytes(bytes).asInt());
        }
    }

    @Test
    void orderingKeyWinsOverKey() {
        byte[] ordering = "order-me".getBytes(StandardCharsets.UTF_8);
        assertThat(KeyHash.ofMessage(Optional.of("key"), Optional.of(ordering))).contains(KeyHash.ofBytes(ordering));
        assertThat(KeyHash.ofMessage(Optional.of("key"), Optional.empty())).contains(KeyHash.of("key"));
        assertThat(KeyHash.ofMessage(Optional.empty(), Optional.empty())).isEmpty();
        assertThat(KeyHash.hashBOf(Optional.empty())).isZero();
    }
}
