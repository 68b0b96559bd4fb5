package io.krabka.coordination.sample;

import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.LeaderListener;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The control plane's pipeline: while this member holds {@code controller}, each request
 * in {@code sample-requests} becomes one command to the device in {@code sample-commands},
 * committed with the request's offset in one guarded transaction. After any failover the
 * next leader resumes at the first request without a committed command, so the device
 * gets exactly one command per request.
 *
 * <p>A request is JSON with a string field {@code id}; anything else goes to
 * {@code sample-requests.DLT} with the reason in its headers.
 */
@Component
public class RequestHandler {

    private final JsonMapper json;
    private final String commandsTopic;
    // The seq of request commands within one term; one pipeline thread calls this at a time.
    private long term = -1;
    private long seq;

    public RequestHandler(JsonMapper json, @Value("${sample.commands-topic:sample-commands}") String commandsTopic) {
        this.json = json;
        this.commandsTopic = commandsTopic;
    }

    @LeaderListener(role = CommandDispatcher.ROLE, topics = "${sample.requests-topic:sample-requests}")
    public ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request, Leadership leadership) {
        String id = requestId(request.value());
        if (leadership.term() != term) {
            term = leadership.term();
            seq = 0;
        }
        FencingToken token = leadership.token();
        Command command = new Command(
                leadership.member().value(), term, seq++, token.producerId(), token.producerEpoch(), Instant.now(), id);
        return new ProducerRecord<>(commandsTopic, CommandDispatcher.ROLE, json.writeValueAsString(command));
    }

    private String requestId(String value) {
        JsonNode request;
        try {
            request = value == null ? null : json.readTree(value);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("a request must be JSON: " + e.getOriginalMessage(), e);
        }
        JsonNode id = request == null ? null : request.get("id");
        if (id == null || !id.isString() || id.asString().isEmpty()) {
            throw new IllegalArgumentException("a request must have a non-empty string field \"id\"");
        }
        return id.asString();
    }
}
