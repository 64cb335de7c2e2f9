@NullMarked
package io.verbatim.model.entry;

import org.jspecify.annotations.NullMarked;
