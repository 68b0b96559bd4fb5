/**
 * What a Spring application uses from its code: {@link OnLeadership} and
 * {@link LeaderListener} methods, {@link GuardedSender}, the leadership events, and the
 * {@link LeadershipLoop} that runs them; the Spring Boot auto-configuration wires it.
 */
@NullMarked
package io.krabka.streams.coordination.spring;

import org.jspecify.annotations.NullMarked;
