package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A lease longer than the brokers allow a transaction to last makes every InitProducerId
 * fail. That does not heal by itself: it is one typed error naming both settings, not a
 * warning every second.
 */
class TransactionTimeoutIT {

    @Test
    void aLeaseLongerThanTheBrokersTransactionMaximumIsOneClearConfigurationError() {
        LeaseConfig lease = new LeaseConfig(Duration.ofSeconds(9), Duration.ofSeconds(3), Duration.ofSeconds(1));
        List<String> grants = new CopyOnWriteArrayList<>();
        try (KafkaTestCluster cluster = KafkaTestCluster.start(1, Map.of("transaction.max.timeout.ms", "5000"));
                KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                        cluster.connection(),
                        TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3),
                        Duration.ofSeconds(10),
                        lease.duration());
                CoordinationClient client = new CoordinationClient(transport, lease, InstantSource.system());
                Contender contender =
                        new Contender(client, Role.of("controller"), MemberId.of("n1"), new Contender.Listener() {
                            @Override
                            public void granted(Leadership leadership) {
                                grants.add(leadership.member().value());
                            }

                            @Override
                            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
                        })) {
            contender.start();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> contender.problem().isPresent());
            assertThat(contender.problem().orElseThrow())
                    .isInstanceOf(CoordinationConfigurationException.class)
                    .hasMessageContaining("transaction.max.timeout.ms")
                    .hasMessageContaining("krabka.coordination.lease.duration")
                    // Found when the member first used the cluster, not when it first challenged.
                    .hasMessageContaining("is longer than broker");
            assertThat(grants).isEmpty();
        }
    }
}
