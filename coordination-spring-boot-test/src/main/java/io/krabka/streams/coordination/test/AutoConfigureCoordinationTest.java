package io.krabka.streams.coordination.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * On a Spring Boot test: the starter runs on an in-memory cluster instead of Kafka, with
 * a {@link io.krabka.streams.coordination.test.runtime.ManualClock} as its lease clock, and a
 * {@link CoordinationTestSupport} bean grants, fences, expires and releases this member's
 * roles on demand. No broker, and no waiting for leases.
 *
 * <pre>{@code
 * @SpringBootTest(properties = "krabka.coordination.roles=controller")
 * @AutoConfigureCoordinationTest
 * class DispatcherTest { @Autowired CoordinationTestSupport coordination; ... }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration(CoordinationTestAutoConfiguration.class)
public @interface AutoConfigureCoordinationTest {}
