package io.krabka.streams.coordination.test.readme;

import io.krabka.streams.coordination.client.Leadership;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/** The README's example of the core's asynchronous guarded send. */
final class GuardedSends {

    private GuardedSends() {
    }

    static void dispatch(Leadership leadership, byte[] key, List<byte[]> commands) {
// tag::readme[]
List<CompletableFuture<RecordMetadata>> acks = commands.stream()
    .map(command -> leadership.send(new ProducerRecord<>("commands", key, command)))   // group-committed
    .toList();
CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();   // all durable, or all fenced
// end::readme[]
    }
}
