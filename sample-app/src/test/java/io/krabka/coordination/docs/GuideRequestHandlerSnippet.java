package io.krabka.coordination.docs;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.LeaderListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.springframework.stereotype.Component;

/** The compiled twin of the USER-GUIDE's @LeaderListener (an inner class: never scanned, never run). */
class GuideRequestHandlerSnippet {

    // snippet-begin docs/USER-GUIDE.md: a @LeaderListener
    @Component
    class RequestHandler {
      @LeaderListener(role = "controller", topics = "requests")
      ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request, Leadership leadership) {
        return new ProducerRecord<>("commands", request.key(), commandFor(request.value(), leadership.term()));
      }
    }
    // snippet-end

    private String commandFor(String request, long term) {
        return request + " under term " + term;
    }
}
