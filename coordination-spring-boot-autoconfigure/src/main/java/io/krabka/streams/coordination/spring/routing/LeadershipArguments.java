package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.GuardedSenders;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.MethodParameter;

/**
 * The {@link Leadership} and {@link GuardedSender} parameters of {@link LeaderOnly}
 * handlers, for either web stack's argument resolver: this member's leadership of the
 * role, the one the request is handled under, as {@code @OnLeadership} methods get them.
 */
final class LeadershipArguments {

    private final LeaderOnlyHandlers handlers;
    private final ObjectProvider<GuardedSenders> senders;

    LeadershipArguments(LeaderOnlyHandlers handlers, ObjectProvider<GuardedSenders> senders) {
        this.handlers = handlers;
        this.senders = senders;
    }

    /** Whether {@code parameter} is a {@link Leadership} or {@link GuardedSender} of a {@link LeaderOnly} handler. */
    boolean supports(MethodParameter parameter) {
        Class<?> type = parameter.getParameterType();
        return (type == Leadership.class || type == GuardedSender.class)
                && parameter.getMethod() != null
                && handlers.roleOf(parameter.getMethod(), parameter.getContainingClass())
                        .isPresent();
    }

    /**
     * The argument for {@code parameter}.
     *
     * @param leadership the request's {@link LeaderOnlyRouter#LEADERSHIP} attribute
     * @throws IllegalStateException when the request was not routed, or there is no {@link GuardedSenders}
     */
    Object resolve(MethodParameter parameter, Object leadership) {
        if (!(leadership instanceof Leadership held)) {
            throw new IllegalStateException("@LeaderOnly handler " + parameter.getMethod() + " was called without a "
                    + "leadership: the routing did not run for it");
        }
        if (parameter.getParameterType() == Leadership.class) {
            return held;
        }
        GuardedSenders found = senders.getIfAvailable();
        if (found == null) {
            throw new IllegalStateException(
                    "@LeaderOnly handler " + parameter.getMethod() + " takes a GuardedSender, but "
                            + "there is no GuardedSenders bean: it needs Spring Kafka's producer factory");
        }
        return found.of(held);
    }
}
