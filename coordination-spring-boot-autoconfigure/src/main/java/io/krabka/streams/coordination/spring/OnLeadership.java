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
 *       take no parameter or one {@link io.krabka.streams.coordination.client.Leadership} (for
 *       the token and guarded writes). When the leadership ends (fenced, lease expired,
 *       released on shutdown) the thread is interrupted, and the leadership loop waits
 *       for it to finish up to {@code krabka.coordination.work-stop-timeout}. A method
 *       that returns while the leadership lasts is not called again until the next grant.</li>
 *   <li>On a bean that implements {@link org.springframework.context.Lifecycle}: the bean
 *       is started on grant and stopped when the leadership ends. Such a bean must not
 *       start with the application context: a {@link org.springframework.context.SmartLifecycle}
 *       must return {@code false} from {@code isAutoStartup()}.</li>
 * </ul>
 *
 * The role must be one of {@code krabka.coordination.roles}; otherwise startup fails.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface OnLeadership {

    /** The role whose leadership this work needs. */
    String role();
}
