/**
 * A Pulsar 4.0.7 standalone broker (one bookie, RocksDB metadata) meant to run in its own JVM: {@link
 * io.verbatim.pulsar.standalone.StandaloneBroker} is the process's main class. It lives apart from Verbatim's
 * adapter because the broker needs Netty 4.1, and the adapter's JVM carries Reactor Netty on Netty 4.2.
 */
@NullMarked
package io.verbatim.pulsar.standalone;

import org.jspecify.annotations.NullMarked;
