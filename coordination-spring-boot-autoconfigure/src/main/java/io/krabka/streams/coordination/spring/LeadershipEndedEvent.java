package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.Objects;
import java.util.Optional;
import org.springframework.context.ApplicationEvent;

/**
 * A leadership of this member ended: fenced by the broker, expired without a renewal,
 * failed, or released ({@link #getCause()} says which). Role-scoped work has been
 * stopped when it is published. Published on the role's callback thread, never on the
 * thread that renews: a slow listener delays the next event of the role, not a renewal.
 */
public class LeadershipEndedEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final Role role;
    private final MemberId member;
    private final FencingToken token;
    private final LeadershipEndCause cause;
    private final transient Throwable failure;

    public LeadershipEndedEvent(Object source, Role role, MemberId member, FencingToken token, LeadershipEndCause cause,
            Throwable failure) {
        super(source);
        this.role = Objects.requireNonNull(role, "role");
        this.member = Objects.requireNonNull(member, "member");
        this.token = Objects.requireNonNull(token, "token");
        this.cause = Objects.requireNonNull(cause, "cause");
        this.failure = failure;
    }

    public Role getRole() {
        return role;
    }

    public MemberId getMember() {
        return member;
    }

    /** The token of the leadership that ended, as it was at the end. */
    public FencingToken getToken() {
        return token;
    }

    public LeadershipEndCause getCause() {
        return cause;
    }

    /** What ended the leadership when it ended {@code FENCED} or {@code FAILED}; empty for {@code RELEASED} and {@code EXPIRED}. */
    public Optional<Throwable> getFailure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public String toString() {
        return "LeadershipEndedEvent[" + member + " no longer holds " + role + " (" + token + "): " + cause + "]";
    }
}
