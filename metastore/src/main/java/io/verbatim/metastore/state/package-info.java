@NullMarked
package io.verbatim.metastore.state;

import org.jspecify.annotations.NullMarked;
