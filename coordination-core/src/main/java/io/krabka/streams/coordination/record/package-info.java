/**
 * The frozen byte layouts of the records in {@code __coordination_state}, and how a role is
 * pinned to its partition.
 */
@NullMarked
package io.krabka.streams.coordination.record;

import org.jspecify.annotations.NullMarked;
