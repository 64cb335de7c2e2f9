/** Segments on Apache Pulsar: the replicator's log SPI over Pulsar's shaded client. */
@NullMarked
package io.verbatim.pulsar;

import org.jspecify.annotations.NullMarked;
