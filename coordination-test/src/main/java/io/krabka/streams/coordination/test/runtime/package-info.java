/**
 * Simulated time for tests of the core library: {@link ManualRuntime}, a
 * {@code CoordinationRuntime} on which nothing happens until the test advances it, and
 * {@link ManualClock}, a wall clock the test sets. Test kit, not for production code.
 */
package io.krabka.streams.coordination.test.runtime;
