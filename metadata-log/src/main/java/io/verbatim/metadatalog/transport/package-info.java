@NullMarked
package io.verbatim.metadatalog.transport;

import org.jspecify.annotations.NullMarked;
