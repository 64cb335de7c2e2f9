@NullMarked
package io.verbatim.metadatalog.server;

import org.jspecify.annotations.NullMarked;
