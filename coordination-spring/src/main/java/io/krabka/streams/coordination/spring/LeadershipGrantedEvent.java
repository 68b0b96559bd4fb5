package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import org.springframework.context.ApplicationEvent;

/**
 * This member was granted a role. Published on the role's callback thread
 * ({@code krabka-coordination-events}, one callback at a time per role), never on the
 * thread that renews, after the member holds the role and before the role's
 * {@link OnLeadership} work and {@link LeaderListener} pipelines start: they start once
 * every listener returned. A listener that throws ends the leadership as
 * {@code FAILED}.
 *
 * <p>Its accessors are named as the rest of the API's ({@link #role()}, {@link #token()},
 * like {@link Leadership#role()}); the {@code get} names are deprecated aliases.
 */
public class LeadershipGrantedEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final transient Leadership leadership;
    private final FencingToken token;

    public LeadershipGrantedEvent(Object source, Leadership leadership) {
        super(source);
        this.leadership = leadership;
        this.token = leadership.token();
    }

    /** The role granted. */
    public Role role() {
        return leadership.role();
    }

    /** This member, which holds the role now. */
    public MemberId member() {
        return leadership.member();
    }

    /** The token at the grant; its term identifies this leadership. */
    public FencingToken token() {
        return token;
    }

    /** The leadership, for guarded writes; its {@link Leadership#term() term} is the token's. */
    public Leadership leadership() {
        return leadership;
    }

    /**
     * The role granted.
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
     * The token at the grant.
     *
     * @deprecated use {@link #token()}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public FencingToken getToken() {
        return token();
    }

    /**
     * The leadership.
     *
     * @deprecated use {@link #leadership()}
     */
    @Deprecated(since = "0.1.0", forRemoval = true)
    public Leadership getLeadership() {
        return leadership();
    }

    @Override
    public String toString() {
        return "LeadershipGrantedEvent[" + member() + " holds " + role() + " with " + token + "]";
    }
}
