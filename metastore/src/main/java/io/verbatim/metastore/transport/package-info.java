@NullMarked
package io.verbatim.metastore.transport;

import org.jspecify.annotations.NullMarked;
