package io.krabka.streams.coordination.kafka;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Leadership on a cluster with transaction version 2, the Kafka 4.x default: the epoch moves on every commit. */
class LeadershipTv2IT extends AbstractLeadershipIT {

    private static KafkaTestCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaTestCluster.start(1, BROKER_SETTINGS);
        cluster.setTransactionVersion((short) 2);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
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
