@NullMarked
package io.verbatim.model;

import org.jspecify.annotations.NullMarked;
