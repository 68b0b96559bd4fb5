package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import org.springframework.context.ApplicationEvent;

/** This member was granted a role. Published on the role's leadership-loop thread. */
public class LeadershipGrantedEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final transient Leadership leadership;
    private final FencingToken token;

    public LeadershipGrantedEvent(Object source, Leadership leadership) {
        super(source);
        this.leadership = leadership;
        this.token = leadership.token();
    }

    public Role getRole() {
        return leadership.role();
    }

    public MemberId getMember() {
        return leadership.member();
    }

    /** The token at the grant; its term identifies this leadership. */
    public FencingToken getToken() {
        return token;
    }

    /** The leadership, for guarded writes. */
    public Leadership getLeadership() {
        return leadership;
    }

    @Override
    public String toString() {
        return "LeadershipGrantedEvent[" + getMember() + " holds " + getRole() + " with " + token + "]";
    }
}
