/**
 * Where members answer HTTP: the addresses they advertise on the members topic, and the book that
 * reads them.
 */
@NullMarked
package io.krabka.streams.coordination.members;

import org.jspecify.annotations.NullMarked;
