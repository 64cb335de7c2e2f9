@NullMarked
package io.verbatim.pipeline;

import org.jspecify.annotations.NullMarked;
