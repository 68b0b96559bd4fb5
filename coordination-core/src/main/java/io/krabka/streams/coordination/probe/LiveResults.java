package io.krabka.streams.coordination.probe;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Live checks that passed in this JVM, by bootstrap servers (a gateway in front of a
 * cluster has the cluster's id), cluster id and finalized transaction version,
 * for {@link FencingProbe.Builder#reuseLiveChecksFor}: how a backend fences is a property
 * of the cluster, not of the member asking, so a JVM that starts several members (tests,
 * several application contexts) need not fence a scratch id for each. Only runs where
 * every live check passed are kept; anything else runs again.
 */
final class LiveResults {

    /** One passed run: its checks, where it wrote, and when. */
    record Run(List<ProbeCheck> checks, String probeTopic, String transactionalId, Instant at) {}

    private static final Map<String, Run> PASSED = new ConcurrentHashMap<>();

    private LiveResults() {}

    private static String key(String bootstrapServers, String clusterId, @Nullable Short transactionVersion) {
        return bootstrapServers + "|" + clusterId + "|" + transactionVersion;
    }

    /** A run of the live checks on this cluster and level, at most {@code maxAge} old, its findings marked as reused. */
    static Optional<Run> reusable(
            String bootstrapServers,
            @Nullable String clusterId,
            @Nullable Short transactionVersion,
            Duration maxAge,
            Instant now) {
        if (clusterId == null || maxAge.isZero()) {
            return Optional.empty();
        }
        Run run = PASSED.get(key(bootstrapServers, clusterId, transactionVersion));
        if (run == null || run.at().plus(maxAge).isBefore(now)) {
            return Optional.empty();
        }
        List<ProbeCheck> reused = run.checks().stream()
                .map(check -> new ProbeCheck(
                        check.name(),
                        check.status(),
                        check.finding() + " (run by this JVM at " + run.at() + ", reused)",
                        check.meaning(),
                        check.fix()))
                .toList();
        return Optional.of(new Run(reused, run.probeTopic(), run.transactionalId(), run.at()));
    }

    /** Keeps {@code checks} when every one passed. */
    static void passed(
            String bootstrapServers, @Nullable String clusterId, @Nullable Short transactionVersion, Run run) {
        if (clusterId != null && run.checks().stream().allMatch(check -> check.status() == ProbeStatus.PASS)) {
            PASSED.put(key(bootstrapServers, clusterId, transactionVersion), run);
        }
    }
}
