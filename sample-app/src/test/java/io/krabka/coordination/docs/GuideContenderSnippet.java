package io.krabka.coordination.docs;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.Map;

/** The compiled twin of the USER-GUIDE's contender with a listener (compiled, never run). */
class GuideContenderSnippet {

    interface Dispatcher {
        void start(Leadership leadership);

        void stop();
    }

    private final Dispatcher dispatcher;

    GuideContenderSnippet(Dispatcher dispatcher) {
        this.dispatcher = dispatcher;
    }

    void contend() throws Exception {
        // snippet-begin docs/USER-GUIDE.md: a contender with a listener
        Map<String, Object> connection = Map.of("bootstrap.servers", "localhost:9092");
        try (KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(
                 connection, TopicSpec.DEFAULTS, Duration.ofSeconds(30), Duration.ofSeconds(30));
             CoordinationClient client = new CoordinationClient(transport);
             Contender contender = new Contender(client, Role.of("controller"), MemberId.of("node-1"),
                 new Contender.Listener() {
                   public void granted(Leadership leadership) { dispatcher.start(leadership); }
                   public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                     dispatcher.stop();   // FENCED, EXPIRED, FAILED or RELEASED
                   }
                 })) {
          contender.start();
          awaitShutdown();
        }   // close(): releases the role with a tombstone, leaves the roster
        // snippet-end
    }

    private void awaitShutdown() {
    }
}
