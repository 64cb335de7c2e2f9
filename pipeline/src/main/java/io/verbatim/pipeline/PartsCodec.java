package io.verbatim.pipeline;

/** How the slow path compresses the parts it re-batches. */
public enum PartsCodec {
    /** With the source entry's codec (PIP-495's default). */
    SOURCE,
    /** Uncompressed: no compression CPU, more bytes on the wire. */
    NONE
}
