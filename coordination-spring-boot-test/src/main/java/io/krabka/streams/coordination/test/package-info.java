/**
 * The Spring Boot test kit: {@link AutoConfigureCoordinationTest} runs an application's
 * leadership on simulated time and an in-memory cluster, and {@link CoordinationTestSupport}
 * drives it (grants, fences, time). The core test kit it builds on lives in the
 * sub-packages {@code runtime}, {@code memory} and {@code transport} (another artifact, so
 * no package is split between the two jars).
 */
package io.krabka.streams.coordination.test;
