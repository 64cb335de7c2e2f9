@NullMarked
package io.verbatim.store;

import org.jspecify.annotations.NullMarked;
