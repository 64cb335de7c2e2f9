/**
 * The storage room: where a cluster's segments live ({@link io.verbatim.runtime.storage.TopicStorage}: the
 * embedded storage, {@link io.verbatim.runtime.storage.MemoryTopicStorage}, or the cluster's Pulsar,
 * {@link io.verbatim.runtime.storage.PulsarTopicStorage}) and the state files of the embedded storage (the journal
 * with group commit, {@link io.verbatim.runtime.storage.LocalStorage}, and checkpoints in
 * {@link io.verbatim.runtime.storage.StateFormat}).
 */
@NullMarked
package io.verbatim.runtime.storage;

import org.jspecify.annotations.NullMarked;
