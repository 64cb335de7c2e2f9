@NullMarked
package io.verbatim.budget;

import org.jspecify.annotations.NullMarked;
