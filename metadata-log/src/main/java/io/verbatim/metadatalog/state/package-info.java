@NullMarked
package io.verbatim.metadatalog.state;

import org.jspecify.annotations.NullMarked;
