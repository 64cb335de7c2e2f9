@NullMarked
package io.verbatim.exchange;

import org.jspecify.annotations.NullMarked;
