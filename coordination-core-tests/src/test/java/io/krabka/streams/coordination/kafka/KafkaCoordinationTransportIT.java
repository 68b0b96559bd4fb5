package io.krabka.streams.coordination.kafka;

import io.krabka.streams.coordination.test.transport.CoordinationTransportContract;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import org.junit.jupiter.api.BeforeAll;

/** The transport contract on a real KRaft broker. */
class KafkaCoordinationTransportIT extends CoordinationTransportContract {

    private static KafkaTestCluster cluster;

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
    }

    @Override
    protected CoordinationTransport newTransport() {
        return cluster.transport();
    }

    @Override
    protected void setTransactionVersion(short version) {
        cluster.setTransactionVersion(version);
    }
}
