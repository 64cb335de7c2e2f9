package io.verbatim.pipeline;

/** Where a newly created replication cursor starts (Pulsar's {@code replicationStartAt}). */
public enum StartAt {
    /** At the first entry still in the segment. */
    EARLIEST,
    /** After the last entry written so far: only new entries replicate. Pulsar's default. */
    LATEST
}
