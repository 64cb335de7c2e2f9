@NullMarked
package io.verbatim.config;

import org.jspecify.annotations.NullMarked;
