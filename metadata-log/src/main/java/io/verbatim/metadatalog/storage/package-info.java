@NullMarked
package io.verbatim.metadatalog.storage;

import org.jspecify.annotations.NullMarked;
