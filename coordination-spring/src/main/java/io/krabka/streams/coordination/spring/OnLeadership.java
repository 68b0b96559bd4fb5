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
 *   <li>On a method: when the role is granted, the method runs on a thread of its own
 *       ({@code krabka-work-<role>-<Class>.<method>}), once per leadership. It may take,
 *       in any order, each of these parameters, or none:
 *       <ul>
 *         <li>{@link io.krabka.streams.coordination.client.Leadership}: the token, the
 *             term, and guarded writes of raw records;</li>
 *         <li>{@link GuardedSender}{@code <K, V>}: typed guarded writes with the
 *             serializers of {@code spring.kafka.producer.*} (or of your
 *             {@link GuardedSenders} bean), which needs Spring Kafka's producer factory.</li>
 *       </ul>
 *       Any other parameter fails startup. When the leadership ends (fenced, lease
 *       expired, released, shutdown) the thread is interrupted and the loop waits for it
 *       to return, up to {@code krabka.coordination.work-stop-timeout}. A method that
 *       does not is abandoned with an ERROR naming the role, the bean and method, and its
 *       thread (with its stack); the next leadership runs the method anew, and that run
 *       is interrupted at its own end whatever became of the abandoned one. The method is
 *       called through the bean's proxy, if any, so its other advice applies; but it must
 *       not be {@code @Async}: it must run on the leadership's thread, where the
 *       leadership's end interrupts it and its return ends the leadership, so
 *       {@code @Async} fails startup, and so does a method that returns a future or a
 *       reactive type: it must block for as long as it leads.</li>
 *   <li>On a bean that implements {@link org.springframework.context.Lifecycle}: the bean
 *       is started on grant and stopped when the leadership ends; if it implements
 *       {@link LeadershipAware} it gets the leadership right before each start.
 *       {@code start()} runs on a worker thread and must return promptly, handing its work
 *       to threads that {@code stop()} stops: one still running after the work-stop
 *       timeout is reported with a WARN, and at the end it is interrupted and
 *       {@code stop()} is called all the same. Such a
 *       bean must not start with the application context: a
 *       {@link org.springframework.context.SmartLifecycle} must return {@code false} from
 *       {@code isAutoStartup()}. Only the leadership loop starts it: the context would
 *       start every {@code Lifecycle} bean on {@code start()} (Spring Cloud's
 *       {@code /actuator/resume}, a CRaC restore), so the bean is a class proxy, like
 *       Spring's other proxies (its class and {@code start()} must not be final), whose
 *       {@code start()} from anyone else is ignored with an INFO. Read its state through
 *       its methods, not its fields. A {@code SmartLifecycle} is stopped with
 *       {@code stop(Runnable)} and waited for within the work-stop timeout.</li>
 * </ul>
 *
 * <p>All the work of a role stops together: every method's thread is interrupted, every
 * bean stopped, and the loop waits for them all within one work-stop timeout.
 *
 * <p>A planned move the starter makes (its shutdown, {@link LeadershipLoop#release},
 * {@link LeadershipLoop#handOver}, and so the endpoint's) stops the work first, within the
 * work-stop timeout, and lets the role go only then, so no successor is granted while it
 * runs; a work that ignores the interrupt is named in a WARN and the role is let go all
 * the same. An unplanned end (fenced, expired, failed) interrupts the work as soon as it is
 * known, and fencing keeps its late writes out.
 *
 * <p>The work ends, the leadership ends: a method that returns or throws while the
 * leadership lasts, or a {@code start()} that throws, gives the role up (a lease
 * tombstone lets a standby take over at once; the ended event says RELEASED or FAILED),
 * stops the role's other work, and the member contends again after a short pause. A role
 * is never held while its work is not running.
 *
 * <p>The bean must be a singleton: the work runs once per leadership, for one bean. A
 * bean of another scope (prototype, request, refresh...) with {@code @OnLeadership} fails
 * startup, whether or not an instance of it was created.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface OnLeadership {

    /**
     * The role whose leadership this work needs: one of {@code krabka.coordination.roles},
     * otherwise startup fails. It may be a {@code ${...}} placeholder, resolved against the
     * environment (as the attributes of {@link LeaderListener} are).
     */
    String role();
}
