/**
 * A real Pulsar broker in a child process, for tests and the demo: {@link io.verbatim.pulsar.broker.PulsarProcess}
 * starts pulsar-standalone's {@code StandaloneBroker} on its own classpath (the broker needs Netty 4.1; this JVM
 * carries Reactor Netty on Netty 4.2), waits for its READY line and stops it.
 */
@NullMarked
package io.verbatim.pulsar.broker;

import org.jspecify.annotations.NullMarked;
