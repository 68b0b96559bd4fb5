package io.krabka.streams.coordination.test.guide;

import io.krabka.streams.coordination.spring.LeaderListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.stereotype.Component;

/** Turns each request into a command, exactly once, on the holder of controller. */
@Component
class RequestDispatcher {

    @LeaderListener(role = "controller", topics = "requests")
    ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request) {
        return new ProducerRecord<>("commands", request.key(), "do " + request.value());
    }
}
