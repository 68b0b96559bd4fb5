package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.Objects;
import org.springframework.context.ApplicationEvent;

/**
 * A leadership of this member ended: fenced by the broker, expired without a renewal,
 * or released. Role-scoped work has been stopped when it is published.
 */
public class LeadershipFencedEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final Role role;
    private final MemberId member;
    private final FencingToken token;
    private final LeadershipEndCause cause;

    public LeadershipFencedEvent(Object source, Role role, MemberId member, FencingToken token, LeadershipEndCause cause) {
        super(source);
        this.role = Objects.requireNonNull(role, "role");
        this.member = Objects.requireNonNull(member, "member");
        this.token = Objects.requireNonNull(token, "token");
        this.cause = Objects.requireNonNull(cause, "cause");
    }

    public Role getRole() {
        return role;
    }

    public MemberId getMember() {
        return member;
    }

    /** The token of the leadership that ended. */
    public FencingToken getToken() {
        return token;
    }

    public LeadershipEndCause getCause() {
        return cause;
    }

    @Override
    public String toString() {
        return "LeadershipFencedEvent[" + member + " lost " + role + " (" + token + "): " + cause + "]";
    }
}
