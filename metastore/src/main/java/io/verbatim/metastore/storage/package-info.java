@NullMarked
package io.verbatim.metastore.storage;

import org.jspecify.annotations.NullMarked;
