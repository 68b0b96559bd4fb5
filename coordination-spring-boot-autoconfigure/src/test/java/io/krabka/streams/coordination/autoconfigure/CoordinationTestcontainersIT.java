package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;

/**
 * The path for users who have Docker: a Kafka container wired in with
 * {@code @ServiceConnection}, no bootstrap servers configured by hand. Skipped, with a
 * printed reason, where no Docker engine answers.
 */
@ExtendWith(DockerAvailable.class)
@Testcontainers
@SpringBootTest(
        properties = {
            "krabka.coordination.roles=controller",
            "krabka.coordination.member-id=tc-1",
            "krabka.coordination.topic.replication-factor=1",
            "krabka.coordination.topic.allow-unsafe=true",
            "krabka.coordination.topic.partitions=3"
        })
class CoordinationTestcontainersIT {

    @Container
    @ServiceConnection
    static final KafkaContainer KAFKA = new KafkaContainer("apache/kafka-native:4.1.2");

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    @Autowired
    LeadershipLoop loop;

    @Test
    void aLoneMemberTakesTheRoleOnAContainerBroker() {
        await().atMost(Duration.ofSeconds(60)).until(() -> loop.state(Role.of("controller")) == MemberRoleState.LEADER);
        assertThat(loop.leadership(Role.of("controller"))).isPresent();
    }
}
