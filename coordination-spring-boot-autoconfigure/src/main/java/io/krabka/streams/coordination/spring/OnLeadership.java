package io.krabka.streams.coordination.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Work that runs only while this member holds a role.
 *
 * <ul>
 *   <li>On a method: when the role is granted, the method runs on its own thread. It may
 *       take no parameter or one {@link io.krabka.streams.coordination.client.Leadership}
 *       (for the token and guarded writes). When the leadership ends (fenced, lease
 *       expired, released on shutdown) the thread is interrupted, and the leadership loop
 *       waits for it to finish up to {@code krabka.coordination.work-stop-timeout}.</li>
 *   <li>On a bean that implements {@link org.springframework.context.Lifecycle}: the bean
 *       is started on grant and stopped when the leadership ends; if it implements
 *       {@link LeadershipAware} it gets the leadership right before each start. Such a
 *       bean must not start with the application context: a
 *       {@link org.springframework.context.SmartLifecycle} must return {@code false} from
 *       {@code isAutoStartup()}.</li>
 * </ul>
 *
 * <p>The work ends, the leadership ends: a method that returns or throws while the
 * leadership lasts, or a {@code start()} that throws, gives the role up (a lease
 * tombstone lets a standby take over at once; the ended event says RELEASED or FAILED),
 * stops the role's other work, and the member contends again after a short pause. A role
 * is never held while its work is not running.
 *
 * <p>The role must be one of {@code krabka.coordination.roles}; otherwise startup fails.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface OnLeadership {

    /** The role whose leadership this work needs. */
    String role();
}
