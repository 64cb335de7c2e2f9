package io.verbatim.model;

/** A segment takes writes while active; a sealed segment is read-only and has successors. */
public enum SegmentState {
    ACTIVE,
    SEALED
}
