/**
 * Exactly-once consume-transform-produce under a leadership: the holder of a role reads its input,
 * processes it in batches and commits the outputs with the input offsets in one guarded transaction.
 */
@NullMarked
package io.krabka.streams.coordination.pipeline;

import org.jspecify.annotations.NullMarked;
