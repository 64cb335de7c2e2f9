package io.verbatim.metadatalog.server;

import com.google.protobuf.ByteString;

/**
 * What a metadata log member applies its committed entries to. Every member (voters and listeners)
 * applies the same commands in the same order, so {@link #apply} must be deterministic: the same state
 * and command give the same outcome everywhere, with no clock, no randomness and no I/O. A command it
 * cannot make sense of is an outcome, never an exception (a throw would stop the member for good).
 * Called from one thread at a time.
 */
public interface StateMachine {

    /** Applies the committed {@code command} at log index {@code index}; the outcome goes to its proposer. */
    Object apply(long index, ByteString command);

    /** Everything applied so far, as bytes {@link #restore} takes back. */
    ByteString snapshot();

    /** Replaces the state by a snapshot's (one taken here or received from the leader). */
    void restore(ByteString snapshot);
}
