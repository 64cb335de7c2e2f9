package io.verbatim.layoutstore;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The layout store's compare-and-set rule, in one place: a topic's layout moves only from the epoch the writer
 * expected (the stored one) to a higher one. Pure: every store asks it and acts on the verdict, the in-memory store by
 * throwing, the metadata log's state machine by recording an outcome (so its outcomes stay the same on every member),
 * the metadata log's front door to refuse before proposing what could never apply.
 */
public final class EpochRule {

    private EpochRule() {
    }

    /** What the rule says of one compare-and-set. */
    public sealed interface Verdict {

        /** The layout may be stored. */
        record Allowed() implements Verdict {
        }

        /** The topic is at {@code actualEpoch}, not the expected one: re-read and try again. */
        record Stale(String topic, long expectedEpoch, long actualEpoch) implements Verdict {
            public StaleEpochException exception() {
                return new StaleEpochException(topic, expectedEpoch, actualEpoch);
            }
        }

        /** The compare-and-set can never apply: no such topic, or a next epoch that does not move forward. */
        record Invalid(String reason) implements Verdict {
            public IllegalArgumentException exception() {
                return new IllegalArgumentException(reason);
            }
        }

        /** Nothing when allowed; else the refusal as a store's caller sees it. */
        default void throwIfRefused() {
            if (this instanceof Stale s) {
                throw s.exception();
            }
            if (this instanceof Invalid i) {
                throw i.exception();
            }
        }
    }

    private static final Verdict ALLOWED = new Verdict.Allowed();

    /**
     * The verdict on replacing {@code topic}'s layout, stored at {@code storedEpoch} (empty: no such topic), by one at
     * {@code nextEpoch}, written by one who read {@code expectedEpoch}. Checked in this order: the topic exists, the
     * stored epoch is the expected one, the next epoch is above it.
     */
    public static Verdict compareAndSet(String topic, OptionalLong storedEpoch, long expectedEpoch, long nextEpoch) {
        if (storedEpoch.isEmpty()) {
            return missing(topic);
        }
        if (storedEpoch.getAsLong() != expectedEpoch) {
            return new Verdict.Stale(topic, expectedEpoch, storedEpoch.getAsLong());
        }
        return notForward(topic, expectedEpoch, nextEpoch).<Verdict>map(v -> v).orElse(ALLOWED);
    }

    /**
     * The verdict on creating {@code topic}, stored at {@code storedEpoch} (empty: no such topic yet): a topic is
     * created once; one that exists is stale from the expected epoch {@code -1}.
     */
    public static Verdict create(String topic, OptionalLong storedEpoch) {
        return storedEpoch.isPresent() ? new Verdict.Stale(topic, -1, storedEpoch.getAsLong()) : ALLOWED;
    }

    /** A compare-and-set of a topic the store does not hold. */
    public static Verdict.Invalid missing(String topic) {
        return new Verdict.Invalid("topic " + topic + " does not exist in this store");
    }

    /**
     * The part of the rule that needs no stored epoch: a compare-and-set from {@code expectedEpoch} to a layout at
     * {@code nextEpoch} that does not move forward can never apply (empty: it moves forward).
     */
    public static Optional<Verdict.Invalid> notForward(String topic, long expectedEpoch, long nextEpoch) {
        return nextEpoch > expectedEpoch ? Optional.empty() : Optional.of(new Verdict.Invalid("the new layout of "
                + topic + " has epoch " + nextEpoch + ", not above " + expectedEpoch));
    }
}
