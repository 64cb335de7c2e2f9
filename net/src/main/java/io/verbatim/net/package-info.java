@NullMarked
package io.verbatim.net;

import org.jspecify.annotations.NullMarked;
