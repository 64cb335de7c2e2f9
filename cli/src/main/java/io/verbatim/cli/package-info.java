@NullMarked
package io.verbatim.cli;

import org.jspecify.annotations.NullMarked;
