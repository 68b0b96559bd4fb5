/**
 * {@link LeaderOnly}: routes a web request to the member that holds a role, for Spring MVC
 * and WebFlux, with the auto-configuration that installs it.
 */
package io.krabka.streams.coordination.spring.routing;
