@NullMarked
package io.verbatim.bench;

import org.jspecify.annotations.NullMarked;
