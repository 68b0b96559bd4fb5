package io.krabka.streams.coordination.probe;

/**
 * How many Kafka clients, and so connections to each broker, one member may open, from
 * its role count: compared with the tightest published ceiling, Amazon MSK with IAM
 * authentication (3 000 connections and 100 new connections a second, per broker).
 */
final class ConnectionEstimate {

    /** The admin, the registrar, the reader, the watcher, the describe reader and up to three more reader lanes. */
    static final int FIXED_CLIENTS = 8;
    /** Amazon MSK with IAM: connections per broker. */
    static final int MSK_IAM_CONNECTIONS = 3_000;
    /** Amazon MSK with IAM: new connections a second, per broker. */
    static final int MSK_IAM_NEW_PER_SECOND = 100;

    private ConnectionEstimate() {}

    static ProbeCheck check(int roles) {
        if (roles == 0) {
            return ProbeCheck.pass(
                    "connections",
                    "role count not given: a member opens up to " + FIXED_CLIENTS + " clients"
                            + " plus one producer per role it holds or challenges",
                    "Each client keeps at most one connection to each"
                            + " broker it talks to; Amazon MSK with IAM allows " + MSK_IAM_CONNECTIONS
                            + " a broker and "
                            + MSK_IAM_NEW_PER_SECOND + " new ones a second");
        }
        int clients = FIXED_CLIENTS + roles;
        String finding = "a member of " + roles + (roles == 1 ? " role" : " roles") + " opens up to " + clients
                + " clients, so up to " + clients + " connections to a broker; " + MSK_IAM_CONNECTIONS / clients
                + " such members fit under Amazon MSK IAM's " + MSK_IAM_CONNECTIONS + " a broker";
        if (clients > MSK_IAM_NEW_PER_SECOND) {
            return ProbeCheck.warn(
                    "connections",
                    finding,
                    "A member that starts or fails over all its roles opens more than "
                            + MSK_IAM_NEW_PER_SECOND
                            + " connections a second to one broker: on Amazon MSK with IAM some are refused"
                            + " and retried, which slows grants",
                    "spread the roles over more members, or check your provider's" + " connection limits");
        }
        return ProbeCheck.pass("connections", finding, "Within the connection ceilings published for managed Kafka");
    }
}
