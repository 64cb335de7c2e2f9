/**
 * The broker room: the brokers of a cluster (the replication links of the segments they own), the producer and the
 * PIP-486 subscriptions with their receiver queues, load tracking and the brokers' report to the leader, the ingest
 * endpoint with its sessions and heartbeats, and the remotes a replicator sends to.
 */
@NullMarked
package io.verbatim.runtime.broker;

import org.jspecify.annotations.NullMarked;
