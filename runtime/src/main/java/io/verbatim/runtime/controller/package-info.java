/**
 * The controller room: a cluster's controller over its metadata log (the replica group in the brokers' process,
 * {@link io.verbatim.runtime.controller.LocalMetadataLog}, or a replica process of its own,
 * {@link io.verbatim.runtime.controller.ControllerReplicaNode}, and the brokers' link to the leader), the admin and
 * delegation endpoints, the admin operations, the PIP-483 policy loop and garbage collection.
 */
@NullMarked
package io.verbatim.runtime.controller;

import org.jspecify.annotations.NullMarked;
