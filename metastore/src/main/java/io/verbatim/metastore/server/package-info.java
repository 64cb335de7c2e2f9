@NullMarked
package io.verbatim.metastore.server;

import org.jspecify.annotations.NullMarked;
