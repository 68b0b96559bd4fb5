package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.succession.RoleState;
import java.time.Duration;

/**
 * What a holder's look at its role needs of the client: the role's folded state, whether
 * a read could find anything new, and where to report a record no honest member wrote.
 * The {@link Engine} is the one implementation.
 */
interface RoleReads {

    /** The role's folded state, waiting up to {@code maxWait} for news. */
    RoleState awaitRoleState(Role role, Duration maxWait);

    /** Whether a read of {@code role} now could find nothing its watchers were not told of. */
    boolean quietSinceRead(Role role);

    /** Counts and logs a record that no honest member would have written. */
    void suspicious(Role role, String what);

    /** Where the transport reaches the cluster, for messages. */
    String location();
}
