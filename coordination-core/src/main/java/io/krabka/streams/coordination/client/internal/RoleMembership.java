package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RoleNews;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * What a contender's pass loop needs of the client besides its balancer and timings: the
 * role's news, the fold that follows renewals in it, and the way out of the roster. The
 * {@link Engine} is the one implementation.
 */
interface RoleMembership {

    /** Calls {@code onNews} soon after a record of {@code role} is committed, until closed; null when nothing tells news. */
    @Nullable
    AutoCloseable watch(Role role, Consumer<RoleNews> onNews);

    /** A renewal heard in the news, believed until {@code boundMillis}: the fold follows it without reading. */
    void renewedInNews(Role role, RoleNews news, long boundMillis);

    /** Closes the producer built ahead of a challenge of {@code role}, if any; asks nothing of the cluster. */
    void discardPrepared(Role role);

    /** Leaves the role's roster; whether a registration was removed. */
    boolean leave(Role role, MemberId me);
}
