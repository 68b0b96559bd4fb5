/**
 * Actuator support: the {@code coordination} endpoint ({@link CoordinationEndpoint}), the
 * {@code coordination} health contributor and the Micrometer meters.
 */
package io.krabka.streams.coordination.actuate;
