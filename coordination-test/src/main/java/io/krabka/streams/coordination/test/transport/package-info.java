/**
 * {@link CoordinationTransportContract}: the behaviour every {@code CoordinationTransport}
 * must show, as a JUnit base class that a transport's own test extends. Test kit.
 */
package io.krabka.streams.coordination.test.transport;
