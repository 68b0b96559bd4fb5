package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.client.Leadership;

/**
 * An {@link OnLeadership} {@link org.springframework.context.Lifecycle} bean that wants
 * the leadership it runs under, for its token and guarded writes: it is handed over right
 * before {@code start()}, on every grant.
 */
public interface LeadershipAware {

    /** The leadership this bean is about to be started for. */
    void setLeadership(Leadership leadership);
}
