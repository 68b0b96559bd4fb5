package io.krabka.streams.coordination.test.readme;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;

/** README.md's core example without Spring: the contender runs the role's work itself. */
final class WorkRunnerExample {

    private WorkRunnerExample() {
    }

    static Contender start() {
        // tag::readme[]
KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(Map.of("bootstrap.servers", "localhost:9092"),
    TopicSpec.DEFAULTS, Duration.ofSeconds(30), Duration.ofSeconds(30));
CoordinationClient client = new CoordinationClient(transport);
Contender contender = Contender.running(client, Role.of("dispatcher"), MemberId.of("node-1"), leadership -> {
  while (!Thread.currentThread().isInterrupted()) {
    leadership.write(List.of(nextCommand()));
  }
});
contender.start();   // contender.close() on shutdown: releases with a tombstone
// end::readme[]
        return contender;
    }

    private static ProducerRecord<byte[], byte[]> nextCommand() {
        return new ProducerRecord<>("commands", new byte[0], new byte[0]);
    }
}
