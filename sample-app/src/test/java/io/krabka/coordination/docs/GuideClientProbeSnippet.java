package io.krabka.coordination.docs;

import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.Map;

/** The compiled twin of the USER-GUIDE's probe through a client (compiled, never run). */
class GuideClientProbeSnippet {

    CoordinationClient probe(Map<String, Object> connection, TopicSpec topic, Duration timeout, Duration lease) {
        // snippet-begin docs/USER-GUIDE.md: the probe through a client
        KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(connection, topic, timeout, lease);
        CoordinationClient client = new CoordinationClient(transport);
        client.probe().requireNoFailure();                       // every check, live ones included
        client.fencingProbe().readOnly(true).build().run();      // or: a run that writes nothing
        // snippet-end
        return client;
    }
}
