package io.krabka.streams.coordination;

/**
 * How the members that contend for the same roles share them.
 *
 * <ul>
 *   <li>{@link #NONE}: the seed's no-failback rule. The member that registered first takes
 *       every role it contends for and keeps it; the others wait as standbys.</li>
 *   <li>{@link #SPREAD}: members converge to an even share, each within one of
 *       {@code roles / live members} when all contend for the same roles; on different
 *       role sets, each role's live contenders within one of each other over the roles
 *       all of them contend for. Roles move only by graceful handover (the holder
 *       releases to a chosen standby; never by preemption), at most one move per member at
 *       a time, and only once the set of members has been steady for a lease. After a
 *       crash, a standby at or above its share challenges after the ones below it, at
 *       most one stagger later than it would have. Everything it decides on comes from
 *       the registrations and leases the member already reads: the record format is the
 *       same, and a member on {@code NONE} (or an older version) in the same roster sees
 *       every move as an ordinary release and grant.</li>
 * </ul>
 */
public enum Balance {
    NONE,
    SPREAD
}
