package io.krabka.coordination.docs;

import io.krabka.streams.coordination.client.Leadership;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/** The compiled twin of the USER-GUIDE's group-committed sends (compiled, never run). */
class GuideGuardedSendsSnippet {

    void sendAll(Leadership leadership, List<byte[]> commands, byte[] key) {
        // snippet-begin docs/USER-GUIDE.md: group-committed sends
        List<CompletableFuture<RecordMetadata>> acks = commands.stream()
            .map(command -> leadership.send(new ProducerRecord<>("commands", key, command)))
            .toList();
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();   // all durable, or fenced
        // snippet-end
    }
}
