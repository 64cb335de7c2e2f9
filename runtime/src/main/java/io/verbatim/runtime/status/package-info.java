/** A process's status document ({@link io.verbatim.runtime.status.NodeStatus}) and how it is answered as JSON. */
@NullMarked
package io.verbatim.runtime.status;

import org.jspecify.annotations.NullMarked;
