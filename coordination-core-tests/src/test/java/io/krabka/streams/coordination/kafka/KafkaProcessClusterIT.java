package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker-JVM cluster the fault tests rely on: it starts, survives a SIGKILL of a node, and takes it back. */
class KafkaProcessClusterIT {

    /** With -Plong: the fault harness's smoke plan (a broker killed and restarted) and SlowPartitionIT use the same cluster. */
    @Test
    @Tag("long")
    void aThreeNodeClusterKeepsGrantingLeadershipWhileOneNodeIsDown(@TempDir Path dir) throws Exception {
        try (KafkaProcessCluster cluster =
                        KafkaProcessCluster.builder(dir).nodes(3).start();
                KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()),
                        TopicSpec.DEFAULTS.withPartitions(3),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(30));
                CoordinationClient client = new CoordinationClient(transport)) {
            Role role = Role.of("process-cluster");
            try (Leadership first = client.acquire(role, MemberId.of("a"), Duration.ofSeconds(60))) {
                first.renew();
            }
            cluster.kill(1);
            assertThat(cluster.node(1).running()).isFalse();
            try (Leadership second = client.acquire(role, MemberId.of("b"), Duration.ofSeconds(60))) {
                second.renew();
                assertThat(second.token().term()).isPositive();
            }
            cluster.restart(1);
            cluster.awaitBrokers(3, Duration.ofSeconds(60));
            assertThat(cluster.node(1).running()).isTrue();
        }
    }
}
