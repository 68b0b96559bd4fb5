package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationEvent;

/**
 * A leadership of this member ended: fenced by the broker, expired without a renewal,
 * failed, or released ({@link #cause()} says which). Published on the role's callback
 * thread ({@code krabka-coordination-events}, one callback at a time per role), never on
 * the thread that renews, after the role's {@link OnLeadership} work and
 * {@link LeaderListener} pipelines stopped (or were abandoned at
 * {@code work-stop-timeout}): a slow listener delays the next event of the role, not a
 * renewal.
 *
 * <p>Its accessors are named as the rest of the API's ({@link #role()}, {@link #cause()},
 * like {@link io.krabka.streams.coordination.client.Leadership#role()}); the {@code get}
 * names are deprecated aliases.
 */
public class LeadershipEndedEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final Role role;
    private final MemberId member;
    private final FencingToken token;
    private final LeadershipEndCause cause;
    private final transient @Nullable Throwable failure;

    public LeadershipEndedEvent(
            Object source,
            Role role,
            MemberId member,
            FencingToken token,
            LeadershipEndCause cause,
            @Nullable Throwable failure) {
        super(source);
        this.role = Objects.requireNonNull(role, "role");
        this.member = Objects.requireNonNull(member, "member");
        this.token = Objects.requireNonNull(token, "token");
        this.cause = Objects.requireNonNull(cause, "cause");
        this.failure = failure;
    }

    /** The role whose leadership ended. */
    public Role role() {
        return role;
    }

    /** This member, which held the role. */
    public MemberId member() {
        return member;
    }

    /** The token of the leadership that ended, as it was at the end; its term identifies the leadership. */
    public FencingToken token() {
        return token;
    }

    /** How the leadership ended. */
    public LeadershipEndCause cause() {
        return cause;
    }

    /**
     * What ended the leadership, when something was thrown: for {@code FAILED} (the
     * producer, the work or a grant listener threw) and for {@code FENCED} when a write or
     * renewal was refused; empty for {@code RELEASED} and {@code EXPIRED}, and for a fence
     * found by reading the topic. Empty rather than null, as the API's other optional values.
     */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * The role.
     *
     * @deprecated use {@link #role()}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public Role getRole() {
        return role();
    }

    /**
     * This member.
     *
     * @deprecated use {@link #member()}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public MemberId getMember() {
        return member();
    }

    /**
     * The token at the end.
     *
     * @deprecated use {@link #token()}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public FencingToken getToken() {
        return token();
    }

    /**
     * How the leadership ended.
     *
     * @deprecated use {@link #cause()}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public LeadershipEndCause getCause() {
        return cause();
    }

    /**
     * What ended the leadership, if anything was thrown.
     *
     * @deprecated use {@link #failure()}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public Optional<Throwable> getFailure() {
        return failure();
    }

    @Override
    public String toString() {
        return "LeadershipEndedEvent[" + member + " no longer holds " + role + " (" + token + "): " + cause + "]";
    }
}
