package io.krabka.streams.coordination.compat;

import io.krabka.streams.coordination.kafka.AbstractLeadershipIT;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The leadership tests (grant, fencing, {@code current()}, handover) on broker JVMs of
 * each Kafka release of the run, under each transaction version the release finalizes,
 * with the project's clients. Each invocation has a broker of its own, as the in-process
 * LeadershipTv1IT and LeadershipTv2IT do: the tests share one coordination topic, and a
 * test that counts the records of its role's partition must not see another run's.
 */
@ParameterizedClass(name = "Kafka {0}, transaction.version {1}")
@MethodSource("io.krabka.streams.coordination.compat.KafkaRelease#releasesAndTransactionVersions")
class BrokerLeadershipIT extends AbstractLeadershipIT {

    private static KafkaTestCluster cluster;

    @Parameter(0)
    String version;

    @Parameter(1)
    short transactionVersion;

    @BeforeParameterizedClassInvocation
    static void startBroker(String version, short transactionVersion) {
        cluster = KafkaRelease.of(version).start("leadership-tv" + transactionVersion, BROKER_SETTINGS);
        cluster.setTransactionVersion(transactionVersion);
    }

    @AfterParameterizedClassInvocation
    static void stopBroker() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }

    @Override
    protected KafkaTestCluster cluster() {
        return cluster;
    }

    @Override
    protected short transactionVersion() {
        return transactionVersion;
    }
}
