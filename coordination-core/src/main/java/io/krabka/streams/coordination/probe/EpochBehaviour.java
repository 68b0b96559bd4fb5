package io.krabka.streams.coordination.probe;

import org.apache.kafka.clients.admin.TransactionDescription;

/**
 * Whether one commit moved the epoch as the finalized {@code transaction.version} says:
 * by exactly one under version 2 (KIP-890), not at all under 0 and 1. A backend whose
 * epochs disagree with the level it reports is not the Kafka it claims to be (a gateway,
 * another engine); members would mispredict their own epoch.
 */
final class EpochBehaviour {

    private EpochBehaviour() {
    }

    /**
     * @param transactionVersion the finalized level, null when it could not be read
     * @param before the coordinator's answer before the commit
     * @param after its answer after the commit
     */
    static ProbeCheck check(String name, Short transactionVersion, TransactionDescription before, TransactionDescription after) {
        String observed = "one commit took the epoch from " + before.producerEpoch() + " to " + after.producerEpoch();
        if (after.producerId() != before.producerId()) {
            return ProbeCheck.warn(name, "the commit changed the producer id from " + before.producerId() + " to "
                    + after.producerId() + " (an epoch rollover, or a gateway that rewrites producer ids)",
                    "Not known how the epoch moves here; the terms (offsets) do not depend on it", null);
        }
        int step = after.producerEpoch() - before.producerEpoch();
        String learned = step == 0 ? "the epoch moves only at InitProducerId" : "the epoch moves by " + step + " a commit";
        if (transactionVersion == null) {
            return ProbeCheck.warn(name, observed + ": " + learned + " (the feature level could not be read to compare)",
                    "Members learn the step from their own first commit", null);
        }
        int expected = transactionVersion >= 2 ? 1 : 0;
        if (step != expected) {
            return ProbeCheck.fail(name, observed + ", but transaction.version=" + transactionVersion + " says "
                    + (expected == 1 ? "every commit moves it by one" : "commits do not move it"), "The backend is not the"
                    + " Kafka its feature levels claim (a gateway, or another engine): members would mispredict their epoch",
                    "connect the members to Apache Kafka brokers directly, or report the backend (docs/COMPATIBILITY.md)");
        }
        return ProbeCheck.pass(name, observed + ", as transaction.version=" + transactionVersion + " says",
                "The epoch a member predicts after its commits is the one the coordinator reports");
    }
}
