/**
 * The device's half of fencing: the headers every guarded write carries, and a gate that admits
 * a command only when its writer's term is not older than one it already admitted.
 */
@NullMarked
package io.krabka.streams.coordination.fencing;

import org.jspecify.annotations.NullMarked;
