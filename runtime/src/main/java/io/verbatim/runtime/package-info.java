/**
 * The runtime's front door and process shell: {@link io.verbatim.runtime.EmbeddedRuntime} (every cluster in one
 * process), {@link io.verbatim.runtime.Node} (one cluster, or one controller replica, per process) and
 * {@link io.verbatim.runtime.ClusterNode}, which wires one cluster's rooms: the controller room
 * ({@code runtime.controller}), the broker room ({@code runtime.broker}), the storage room
 * ({@code runtime.storage}) and the status documents ({@code runtime.status}). No room knows the shell; the
 * broker and storage rooms know no controller; the storage room knows no other room. Other modules use the shell,
 * the status documents and the broker's {@code Producer} and {@code Subscription} (the architecture test says so).
 */
@NullMarked
package io.verbatim.runtime;

import org.jspecify.annotations.NullMarked;
