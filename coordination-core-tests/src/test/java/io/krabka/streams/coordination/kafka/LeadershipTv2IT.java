package io.krabka.streams.coordination.kafka;

import org.junit.jupiter.api.BeforeAll;

/** Leadership on a cluster with transaction version 2, the Kafka 4.x default: the epoch moves on every commit. */
class LeadershipTv2IT extends AbstractLeadershipIT {

    private static KafkaTestCluster cluster;

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
        cluster.setTransactionVersion((short) 2);
    }

    @Override
    protected short transactionVersion() {
        return 2;
    }

    @Override
    protected KafkaTestCluster cluster() {
        return cluster;
    }
}
