/**
 * The succession rules: pure functions that decide, from a role's folded records, a member, the
 * lease timings and an explicit {@code now}, what the member should do next
 * ({@link io.krabka.streams.coordination.succession.Succession#evaluate} gives a
 * {@link io.krabka.streams.coordination.succession.Decision}).
 *
 * <p>They hold no clock and do no I/O, so a test can drive a whole failover with a
 * {@code ManualClock} (artifact {@code krabka-coordination-test}) and no broker.
 */
@NullMarked
package io.krabka.streams.coordination.succession;

import org.jspecify.annotations.NullMarked;
