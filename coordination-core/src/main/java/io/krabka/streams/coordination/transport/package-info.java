/**
 * Every cluster operation the module performs, as one interface, and the records it carries;
 * the Kafka transport and the in-memory one of {@code krabka-coordination-test} implement it.
 */
@NullMarked
package io.krabka.streams.coordination.transport;

import org.jspecify.annotations.NullMarked;
