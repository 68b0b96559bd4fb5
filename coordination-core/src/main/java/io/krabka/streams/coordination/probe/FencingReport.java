package io.krabka.streams.coordination.probe;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link FencingProbe} found on one cluster: every check in the order it ran
 * (cheapest first).
 *
 * @param clusterId the id of the cluster the checks ran against (Admin describeCluster);
 *     null when the cluster did not tell
 * @param bootstrapServers the bootstrap servers the probe was given
 * @param topic the coordination topic checked (never written)
 * @param probeTopic the topic the live checks wrote to; null in a read-only run
 * @param transactionalId the scratch {@code transactional.id} of the live checks; null in
 *     a read-only run
 * @param readOnly whether the live checks were skipped
 * @param startedAt when the probe began
 * @param tookMillis how long it took
 * @param checks every check, in the order it ran
 */
public record FencingReport(
        @Nullable String clusterId,
        String bootstrapServers,
        String topic,
        @Nullable String probeTopic,
        @Nullable String transactionalId,
        boolean readOnly,
        Instant startedAt,
        long tookMillis,
        List<ProbeCheck> checks) {

    public FencingReport {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(startedAt, "startedAt");
        checks = List.copyOf(checks);
    }

    /** The worst status of any check: FAIL, else WARN, else PASS (a skipped check counts as nothing). */
    public ProbeStatus status() {
        ProbeStatus worst = ProbeStatus.PASS;
        for (ProbeCheck check : checks) {
            if (check.status() != ProbeStatus.SKIPPED) {
                worst = worst.worse(check.status());
            }
        }
        return worst;
    }

    /** The checks that failed. */
    public List<ProbeCheck> failures() {
        return with(ProbeStatus.FAIL);
    }

    /** The checks that warn. */
    public List<ProbeCheck> warnings() {
        return with(ProbeStatus.WARN);
    }

    /** The checks a read-only run skipped. */
    public List<ProbeCheck> skipped() {
        return with(ProbeStatus.SKIPPED);
    }

    /** The check of this name, if it ran. */
    public java.util.Optional<ProbeCheck> check(String name) {
        return checks.stream().filter(check -> check.name().equals(name)).findFirst();
    }

    /** How long the probe took. */
    public Duration took() {
        return Duration.ofMillis(tookMillis);
    }

    private List<ProbeCheck> with(ProbeStatus status) {
        return checks.stream().filter(check -> check.status() == status).toList();
    }

    /**
     * Throws when a check failed, naming each failed check and its fix.
     *
     * @return this report, when nothing failed
     * @throws FencingProbeException when some check failed
     */
    public FencingReport requireNoFailure() {
        if (!failures().isEmpty()) {
            throw new FencingProbeException(this);
        }
        return this;
    }
}
