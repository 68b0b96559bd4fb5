package io.krabka.streams.coordination.spring.routing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A Spring MVC or WebFlux handler (a method, or every handler method of a controller
 * class) that only the holder of a role handles. Any member accepts the request:
 * <ul>
 *   <li>on the holder it is handled, and the answer carries {@code Krabka-Role-Holder}
 *       and {@code Krabka-Role-Term};</li>
 *   <li>on another member it is forwarded to the holder and the answer streamed back
 *       ({@code krabka.coordination.routing.mode=forward}, the default), or answered
 *       {@code 307} with the holder's URL ({@code redirect});</li>
 *   <li>with no holder it is answered {@code 503} with {@code Retry-After} and an RFC 9457
 *       problem body.</li>
 * </ul>
 * With {@code krabka.coordination.routing.enabled=false} a member that does not hold the
 * role answers that {@code 503} too (its detail names routing off), and never handles the
 * request itself.
 * A forwarded request is never forwarded again: a member that gets one for a role it
 * does not hold answers {@code 503}. Members forward only to the holder named by the
 * coordination topic, at the address it advertises on {@code <topic>-members}, and only
 * when {@code krabka.coordination.routing.allowed-targets} allows that address.
 *
 * <p>The handler may declare a {@link io.krabka.streams.coordination.client.Leadership}
 * or a {@link io.krabka.streams.coordination.spring.GuardedSender} parameter: this
 * member's leadership of the role, the one the request was routed under (on WebFlux,
 * write with {@code GuardedSender.sendAsync}, which does not block). Routing is a
 * convenience; fencing stays the safety: a holder deposed while it handles the request
 * has its guarded writes refused by the broker.
 *
 * <p>Only request handlers: on a bean method that no handler mapping registered (a
 * {@code @Scheduled} job, say), or on a class with no handler method, it would do nothing,
 * so startup fails with a {@link LeaderOnlyMisplacedException}. Leader-only work is
 * {@code @OnLeadership}'s.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

    /**
     * The role whose holder handles the request: one of {@code krabka.coordination.roles},
     * otherwise startup fails. It may be a {@code ${...}} placeholder.
     */
    String role();
}
