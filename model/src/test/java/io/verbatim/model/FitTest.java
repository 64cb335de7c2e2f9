package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FitTest {
    private final Layout coarse = Layout.initial(1, 4, 0); // [0000, ffff], N=4
    private final Layout fine = coarse.apply(Mutation.split(0), 0, 0).layoutOrThrow(); // two halves, N=2

    @Test
    void verbatimWhenTheDestinationCoversTheSourceAndTheStampIsInOneBucket() {
        Fit fit = Fit.classify(HashRange.of(0, 0x7fff), EntryFacts.stamped(new Stamp(100, 200)), coarse);
        assertThat(fit).isEqualTo(new Fit.Verbatim(coarse.activeSegments().get(0)));
    }

    @Test
    void rebatchWhenTheDestinationIsFinerThanTheSource() {
        Fit fit = Fit.classify(HashRange.FULL, EntryFacts.stamped(new Stamp(100, 200)), fine);
        assertThat(fit).isEqualTo(new Fit.Rebatch(Fit.Reason.SEGMENT_STRADDLE));
    }

    @Test
    void rebatchWhenTheStampCrossesADestinationBucket() {
        Fit fit = Fit.classify(HashRange.FULL, EntryFacts.stamped(new Stamp(16000, 17000)), coarse);
        assertThat(fit).isEqualTo(new Fit.Rebatch(Fit.Reason.BUCKET_STRADDLE));
    }

    @Test
    void anEffectiveStampNarrowerThanItsBucketStillFitsAFinerBucketing() {
        Layout eight = coarse.apply(Mutation.rebucket(0, 8), 0, 0).layoutOrThrow();
        assertThat(Fit.classify(HashRange.FULL, EntryFacts.stamped(new Stamp(100, 8000)), eight))
                .isInstanceOf(Fit.Verbatim.class);
        assertThat(Fit.classify(HashRange.FULL, EntryFacts.stamped(new Stamp(8000, 8200)), eight))
                .isEqualTo(new Fit.Rebatch(Fit.Reason.BUCKET_STRADDLE));
    }

    @Test
    void unstampedLegacyEntriesAlwaysTakeTheSlowPath() {
        assertThat(Fit.classify(HashRange.FULL, EntryFacts.unstamped(), coarse))
                .isEqualTo(new Fit.Rebatch(Fit.Reason.UNSTAMPED));
    }

    @Test
    void unkeyedBatchesFitBucketZeroOfAnySegment() {
        EntryFacts unkeyed = new EntryFacts(Optional.of(Stamp.of(0)), true, false, false, Optional.empty());
        assertThat(Fit.classify(HashRange.FULL, unkeyed, fine))
                .isEqualTo(new Fit.Verbatim(fine.activeSegmentFor(0)));
    }

    @Test
    void anEncryptedSingleMessageIsPlacedByItsOuterKeyEvenDuringATransition() {
        KeyHash key = KeyHash.of("foo"); // segment hash f6a5
        EntryFacts encrypted = new EntryFacts(Optional.of(Stamp.of(key.hashB())), false, true, true, Optional.of(key));
        assertThat(Fit.classify(HashRange.FULL, encrypted, fine))
                .isEqualTo(new Fit.Verbatim(fine.activeSegmentFor(0xf6a5)));
        EntryFacts unstampedEncrypted = new EntryFacts(Optional.empty(), false, true, true, Optional.of(key));
        assertThat(Fit.classify(HashRange.FULL, unstampedEncrypted, fine)).isInstanceOf(Fit.Verbatim.class);
    }

    @Test
    void anEncryptedBatchThatDoesNotFitIsNamedAsSuch() {
        EntryFacts batch = new EntryFacts(Optional.of(new Stamp(1, 60000)), false, false, true, Optional.empty());
        assertThat(Fit.classify(HashRange.FULL, batch, coarse))
                .isEqualTo(new Fit.Rebatch(Fit.Reason.ENCRYPTED_BATCH));
    }

    /**
     * For random source segments, destinations and entries whose keys all route into the source
     * segment: a verbatim answer always names a destination segment that holds every key, and one
     * bucket of it that holds every hashB.
     */
    @Test
    void neverVerbatimForAnEntryThatWouldStraddleOrLeaveTheDestination() {
        Property.forAll("fit is safe", 0x5eed_0020L, 3000, r -> {
            Layout source = Generators.evolvedLayout(r, r.nextInt(20));
            Layout destination = Generators.evolvedLayout(r, r.nextInt(20));
            Segment from = source.activeSegments().get(r.nextInt(source.activeSegments().size()));
            List<KeyHash> keys = keysIn(r, from, 1 + r.nextInt(30));
            Stamp stamp = Stamp.of(keys.get(0).hashB());
            for (KeyHash k : keys) {
                stamp = stamp.including(k.hashB());
            }
            boolean single = keys.size() == 1;
            EntryFacts facts = new EntryFacts(Optional.of(stamp), false, single, false,
                    single ? Optional.of(keys.get(0)) : Optional.empty());
            Fit fit = Fit.classify(from.range(), facts, destination);
            if (fit instanceof Fit.Verbatim verbatim) {
                Segment d = verbatim.destination();
                assertThat(d.isActive()).isTrue();
                int bucket = d.buckets().bucketOf(keys.get(0).hashB());
                for (KeyHash k : keys) {
                    assertThat(d.range().contains(k.segmentHash())).as("key %s leaves %s", k, d).isTrue();
                    assertThat(d.buckets().bucketOf(k.hashB())).as("key %s straddles in %s", k, d).isEqualTo(bucket);
                }
            }
        });
    }

    @Test
    void identicalLayoutsAlwaysFitForStampedEntries() {
        Property.forAll("identical layouts always fit", 0x5eed_0021L, 1000, r -> {
            Layout layout = Generators.evolvedLayout(r, r.nextInt(20));
            Segment from = layout.activeSegments().get(r.nextInt(layout.activeSegments().size()));
            int bucket = r.nextInt(from.buckets().count());
            HashRange b = from.buckets().range(bucket);
            int lo = b.start() + r.nextInt(b.size());
            int hi = lo + r.nextInt(b.end() - lo + 1);
            assertThat(Fit.classify(from.range(), EntryFacts.stamped(new Stamp(lo, hi)), layout))
                    .isEqualTo(new Fit.Verbatim(from));
        });
    }

    private static List<KeyHash> keysIn(Random r, Segment segment, int count) {
        HashRange range = segment.range();
        List<KeyHash> keys = new ArrayList<>();
        while (keys.size() < count) {
            int raw = (range.start() + r.nextInt(range.size())) << 16 | r.nextInt(65536);
            keys.add(new KeyHash(raw));
        }
        return keys;
    }
}
