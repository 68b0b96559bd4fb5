package io.krabka.streams.coordination.kafka;

import org.junit.jupiter.api.BeforeAll;

/** Leadership on a cluster lowered to transaction version 1: the epoch stays fixed across commits. */
class LeadershipTv1IT extends AbstractLeadershipIT {

    private static KafkaTestCluster cluster;

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
        cluster.setTransactionVersion((short) 1);
    }

    @Override
    protected short transactionVersion() {
        return 1;
    }

    @Override
    protected KafkaTestCluster cluster() {
        return cluster;
    }
}
