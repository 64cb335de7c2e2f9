@NullMarked
package io.verbatim.runtime;

import org.jspecify.annotations.NullMarked;
