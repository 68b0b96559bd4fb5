package io.krabka.coordination.docs;

import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.probe.FencingProbe;
import io.krabka.streams.coordination.probe.FencingReport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.Map;

/** The compiled twin of the USER-GUIDE's fencing probe before a transport (compiled, never run). */
class GuideProbeSnippet {

    KafkaCoordinationTransport probeThenCreate(Map<String, Object> connection) {
        // snippet-begin docs/USER-GUIDE.md: the fencing probe
        TopicSpec topic = TopicSpec.DEFAULTS;
        Duration timeout = Duration.ofSeconds(30);
        Duration lease = Duration.ofSeconds(30);
        FencingReport report = FencingProbe.forTransport(connection, topic, timeout, lease).run();
        report.requireNoFailure(); // FencingProbeException: each FAIL, what it means, and its fix
        KafkaCoordinationTransport transport = KafkaCoordinationTransport.create(connection, topic, timeout, lease);
        // snippet-end
        return transport;
    }
}
