package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.CoordinationAuthenticationException;
import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a contender says about the cluster's failures: the last one for health
 * ({@link Contender#problem()}), a WARN at most once a minute while a cluster keeps
 * failing, one ERROR for a refusal that does not heal by itself, and a line when the
 * cluster answers again.
 */
final class FailureReport {

    // The contender's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(RoleContender.LOGGER);

    private final Role role;
    private final MemberId member;
    private final CoordinationRuntime runtime;
    private final Supplier<String> location;
    // Whether the contender still runs: stopping interrupts waits, which is no news about the cluster.
    private final BooleanSupplier running;
    // The last cluster operation's failure, when the last operation succeeded, and when
    // failures began to be reported (a failure is reported when its call gives up, up to a
    // whole timeout after the cluster stopped answering) and were last logged.
    private volatile @Nullable CoordinationException problem;
    private volatile long reachedAtNanos;
    private volatile long failingSinceNanos;
    private volatile long warnedAtNanos;

    FailureReport(
            Role role,
            MemberId member,
            CoordinationRuntime runtime,
            Supplier<String> location,
            BooleanSupplier running) {
        this.role = role;
        this.member = member;
        this.runtime = runtime;
        this.location = location;
        this.running = running;
        this.reachedAtNanos = runtime.nanoTime();
    }

    /** The failure of the last cluster operation, while operations fail; null once one succeeds. */
    @Nullable
    CoordinationException problem() {
        return problem;
    }

    /** Shows {@code failure} as the problem at once (health), without a log line: its caller logs. */
    void show(CoordinationException failure) {
        problem = failure;
    }

    /** An operation succeeded: the problem is over. */
    void reachable() {
        long now = runtime.nanoTime();
        if (problem != null && failingSinceNanos != 0) {
            // Since the last success, not the first failure: a call that got no answer fails
            // only at its timeout, so failures are reported up to a timeout late.
            log.info(
                    "Member {} reaches {} again for role {} after {} s without a successful operation",
                    member,
                    location.get(),
                    role,
                    TimeUnit.NANOSECONDS.toSeconds(now - reachedAtNanos));
        }
        reachedAtNanos = now;
        problem = null;
        failingSinceNanos = 0;
        warnedAtNanos = 0;
    }

    /** {@code operation} failed on the cluster; it is tried again. */
    void unreachable(String operation, CoordinationException failure) {
        if (!running.getAsBoolean()) {
            log.debug(
                    "Member {} stopped while it tried to {} role {}: {}",
                    member,
                    operation,
                    role,
                    failure.getMessage());
            return;
        }
        long now = runtime.nanoTime();
        problem = failure;
        if (failingSinceNanos == 0) {
            failingSinceNanos = now;
        }
        if (warnedAtNanos == 0 || now - warnedAtNanos >= RoleContender.WARN_INTERVAL.toNanos()) {
            boolean first = warnedAtNanos == 0;
            warnedAtNanos = now;
            log.warn(
                    "Member {} could not {} role {} on {}: {} It keeps trying{}",
                    member,
                    operation,
                    role,
                    location.get(),
                    sentence(failure.getMessage()),
                    first
                            ? " and says so again at most once a minute while this lasts"
                            : " (failing for " + TimeUnit.NANOSECONDS.toSeconds(now - failingSinceNanos) + " s)");
        } else {
            log.debug("Member {} could not {} role {}: {}", member, operation, role, failure.getMessage());
        }
    }

    /** The cluster refused this member (ACLs, authentication, a changed topic): logged once per kind until it heals. */
    void refused(CoordinationException denied) {
        if (!running.getAsBoolean()) {
            log.debug("Member {} stopped while contending for role {}: {}", member, role, denied.getMessage());
            return;
        }
        boolean first = problem == null || problem.getClass() != denied.getClass();
        problem = denied;
        if (!first) {
            return;
        }
        long backoff = RoleContender.DENIAL_BACKOFF.toSeconds();
        if (denied instanceof CoordinationConfigurationException) {
            log.error(
                    "Member {} cannot contend for role {}: {} It looks again every {} s and does not log this again until "
                            + "that works",
                    member,
                    role,
                    sentence(denied.getMessage()),
                    backoff);
        } else if (denied instanceof CoordinationAuthenticationException) {
            log.error(
                    "Member {} could not authenticate to the cluster while contending for role {} on {}: {} "
                            + "Check the SASL credentials and TLS trust settings. It tries again every {} s and does not log this "
                            + "again until an attempt gets through",
                    member,
                    role,
                    location.get(),
                    sentence(denied.getMessage()),
                    backoff);
        } else {
            log.error(
                    "Member {} is not authorized to take role {}: {} A member of the role needs Write on TransactionalId:{} "
                            + "and Read, Write and DescribeConfigs on the coordination topic (Create too if it creates it). "
                            + "It tries again every {} s and does not log this again until an attempt gets through",
                    member,
                    role,
                    sentence(denied.getMessage()),
                    role,
                    backoff);
        }
    }

    private static String sentence(@Nullable String text) {
        return text == null ? "(no reason given)." : text.endsWith(".") ? text : text + ".";
    }
}
