@NullMarked
package io.verbatim.examples;

import org.jspecify.annotations.NullMarked;
