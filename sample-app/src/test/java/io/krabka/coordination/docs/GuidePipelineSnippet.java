package io.krabka.coordination.docs;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.pipeline.LeaderPipeline;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/** The compiled twin of the USER-GUIDE's leader pipeline (compiled, never run). */
class GuidePipelineSnippet {

    LeaderPipeline create(Map<String, Object> connection) {
        // snippet-begin docs/USER-GUIDE.md: a leader pipeline
        LeaderPipeline pipeline = LeaderPipeline.create(connection,
            PipelineSettings.of(Role.of("controller"), "requests"),          // group "controller-pipeline"
            (batch, leadership) -> batch.stream()
                .map(request -> new ProducerRecord<>("commands", request.key(), toCommand(request, leadership.term())))
                .toList());
        // In Contender.Listener.granted: a thread that calls pipeline.run(leadership); in ended: interrupt it.
        // snippet-end
        return pipeline;
    }

    private byte[] toCommand(ConsumerRecord<byte[], byte[]> request, long term) {
        return request.value();
    }
}
