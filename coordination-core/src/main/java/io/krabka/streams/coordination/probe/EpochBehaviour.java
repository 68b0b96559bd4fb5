package io.krabka.streams.coordination.probe;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.jspecify.annotations.Nullable;

/**
 * Whether one commit moved the epoch as the finalized {@code transaction.version} says:
 * by exactly one under version 2 (KIP-890), not at all under 0 and 1. A backend whose
 * epochs disagree with the level it reports is not the Kafka it claims to be (a gateway,
 * another engine); members would mispredict their own epoch.
 */
final class EpochBehaviour {

    private EpochBehaviour() {}

    /**
     * @param transactionVersion the finalized level, null when it could not be read
     * @param before the coordinator's answer before the commit
     * @param after its answer after the commit
     */
    static ProbeCheck check(
            String name,
            @Nullable Short transactionVersion,
            TransactionDescription before,
            TransactionDescription after) {
        String observed = "one commit took the epoch from " + before.producerEpoch() + " to " + after.producerEpoch();
        if (after.producerId() != before.producerId()) {
            return ProbeCheck.warn(
                    name,
                    "the commit changed the producer id from " + before.producerId() + " to " + after.producerId()
                            + " (an epoch rollover, or a gateway that rewrites producer ids)",
                    "Not known how the epoch moves here; the terms (offsets) do not depend on it",
                    null);
        }
        int step = after.producerEpoch() - before.producerEpoch();
        String learned =
                step == 0 ? "the epoch moves only at InitProducerId" : "the epoch moves by " + step + " a commit";
        if (transactionVersion == null) {
            return ProbeCheck.warn(
                    name,
                    observed + ": " + learned + " (the feature level could not be read to compare)",
                    "Members learn the step from their own first commit",
                    null);
        }
        int expected = transactionVersion >= 2 ? 1 : 0;
        if (step != expected) {
            return ProbeCheck.fail(
                    name,
                    observed + ", but transaction.version=" + transactionVersion + " says "
                            + (expected == 1 ? "every commit moves it by one" : "commits do not move it"),
                    "The backend is not the"
                            + " Kafka its feature levels claim (a gateway, or another engine): members would mispredict their epoch",
                    "connect the members to Apache Kafka brokers directly, or report the backend (docs/COMPATIBILITY.md)");
        }
        return ProbeCheck.pass(
                name,
                observed + ", as transaction.version=" + transactionVersion + " says",
                "The epoch a member predicts after its commits is the one the coordinator reports");
    }

    /**
     * A disagreement seen while the finalized level changed under the probe (an operator's
     * upgrade or downgrade, or a broker that learned of one late) is no evidence against
     * the backend: the {@code name} check becomes a WARN when the level read again now
     * differs from the one read before the live checks.
     */
    static List<ProbeCheck> recheck(
            String name, List<ProbeCheck> live, @Nullable Short before, Supplier<@Nullable Short> now) {
        boolean disagreed =
                live.stream().anyMatch(check -> check.name().equals(name) && check.status() == ProbeStatus.FAIL);
        Short current = disagreed ? now.get() : before;
        if (Objects.equals(current, before)) {
            return live;
        }
        return live.stream()
                .map(check -> !check.name().equals(name)
                        ? check
                        : ProbeCheck.warn(
                                name,
                                check.finding() + "; transaction.version reads " + current
                                        + " now: it changed while the probe ran",
                                "Not known which"
                                        + " level the backend runs; members learn the step from their own commits",
                                "run the probe again"))
                .toList();
    }
}
