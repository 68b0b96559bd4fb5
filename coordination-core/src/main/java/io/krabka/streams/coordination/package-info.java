/**
 * Leader election with broker-enforced fencing on Kafka's transaction coordinator: the
 * names, tokens, timings and exceptions that every other package of the module shares.
 *
 * <p>Every package of this module is {@code @NullMarked}: a type is non-null unless it says
 * {@code @Nullable}.
 */
@NullMarked
package io.krabka.streams.coordination;

import org.jspecify.annotations.NullMarked;
