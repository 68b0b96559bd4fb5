package io.krabka.streams.coordination.kafka;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Leadership on a cluster lowered to transaction version 1: the epoch stays fixed across commits. */
class LeadershipTv1IT extends AbstractLeadershipIT {

    private static KafkaTestCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start(1, BROKER_SETTINGS);
        cluster.setTransactionVersion((short) 1);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
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
