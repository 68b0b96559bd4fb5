package io.krabka.streams.coordination.compat;

import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.test.transport.CoordinationTransportContract;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** The transport contract on broker JVMs of each Kafka release of the run (KafkaRelease), with the project's clients. */
@ParameterizedClass(name = "Kafka {0}")
@MethodSource("io.krabka.streams.coordination.compat.KafkaRelease#releases")
class BrokerTransportContractIT extends CoordinationTransportContract {

    private static KafkaRelease release;
    private static KafkaTestCluster cluster;

    /** The release of this invocation (its broker is started from the same argument). */
    @Parameter(0)
    String version;

    /** Set once the test body is over: the contract's own clean-up runs after this class's. */
    private boolean bodyDone;

    @BeforeParameterizedClassInvocation
    static void startBroker(String version) {
        release = KafkaRelease.of(version);
        cluster = release.start("transport-contract", Map.of());
    }

    @AfterParameterizedClassInvocation
    static void stopBroker() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }

    @AfterEach
    void bodyDone() {
        bodyDone = true;
    }

    @Override
    protected CoordinationTransport newTransport() {
        return cluster.transport();
    }

    /**
     * Kafka 3.9 finalizes level 0 only, the protocol that level 1 keeps for clients (one
     * epoch per InitProducerId, EndTxn below version 5): a test of level 1 runs on it as is,
     * a test of level 2 is aborted, and the contract's reset to 2 after each test has
     * nothing to do.
     */
    @Override
    protected void setTransactionVersion(short version) {
        short max = release.maxTransactionVersion();
        if (version <= max) {
            cluster.setTransactionVersion(version);
        } else if (max < 1 && version == 1) {
            cluster.setTransactionVersion(max);
        } else if (!bodyDone) {
            Assumptions.abort(release + " has no transaction.version " + version + " (it supports up to " + max + ")");
        }
    }
}
