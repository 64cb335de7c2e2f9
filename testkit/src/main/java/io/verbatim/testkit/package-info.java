/**
 * What a test of replication adds in test scope: the checks that judge what clusters store and what consumers
 * were given ({@link io.verbatim.testkit.ReplicationChecks}, {@link io.verbatim.testkit.ReplicationRecorder},
 * {@link io.verbatim.testkit.DeliveryChecks}), seeded keyed traffic whose payloads the checks can find
 * ({@link io.verbatim.testkit.Traffic}) and a simulated link ({@link io.verbatim.testkit.SimulatedLink}). No
 * production module depends on it; the demo does, as it judges its own run.
 */
@NullMarked
package io.verbatim.testkit;

import org.jspecify.annotations.NullMarked;
