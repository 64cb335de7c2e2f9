@NullMarked
package io.verbatim.pipeline.memory;

import org.jspecify.annotations.NullMarked;
