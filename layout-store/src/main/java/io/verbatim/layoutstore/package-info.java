@NullMarked
package io.verbatim.layoutstore;

import org.jspecify.annotations.NullMarked;
