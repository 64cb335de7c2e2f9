/**
 * The embedded storage, beside the Pulsar one: {@link io.verbatim.embedded.MemorySegments} keeps one topic of a
 * cluster in memory and implements the log SPI of {@code io.verbatim.pipeline} (local segments, cursors, remote
 * sessions with the destination's deduplication and fencing). With a {@link io.verbatim.embedded.Journal} every
 * change is written before it is acknowledged and replayed over a checkpoint at start; the runtime's storage
 * writes that journal to files. {@link io.verbatim.embedded.SendFaults} are its fault points, for tests.
 */
@NullMarked
package io.verbatim.embedded;

import org.jspecify.annotations.NullMarked;
