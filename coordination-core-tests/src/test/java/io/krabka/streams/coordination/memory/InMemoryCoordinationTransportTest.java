package io.krabka.streams.coordination.memory;

import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.CoordinationTransportContract;
import io.krabka.streams.coordination.transport.TopicSpec;

class InMemoryCoordinationTransportTest extends CoordinationTransportContract {

    private final InMemoryCluster cluster = new InMemoryCluster();

    @Override
    protected CoordinationTransport newTransport() {
        return cluster.transport(TopicSpec.DEFAULTS.withPartitions(3));
    }

    @Override
    protected void setTransactionVersion(short version) {
        cluster.setTransactionVersion(version);
    }
}
