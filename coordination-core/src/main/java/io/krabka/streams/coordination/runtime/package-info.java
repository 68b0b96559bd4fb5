/**
 * Time and threads for the library: the clocks and executors every contender, leadership and
 * pipeline of a client runs on.
 */
@NullMarked
package io.krabka.streams.coordination.runtime;

import org.jspecify.annotations.NullMarked;
