/**
 * Checks that a Kafka backend does what the fencing guarantees rest on, before a member contends
 * there.
 */
@NullMarked
package io.krabka.streams.coordination.probe;

import org.jspecify.annotations.NullMarked;
