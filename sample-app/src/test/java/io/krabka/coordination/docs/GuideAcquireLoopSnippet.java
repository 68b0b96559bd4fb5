package io.krabka.coordination.docs;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import java.time.Duration;
import org.apache.kafka.clients.producer.ProducerRecord;

/** The compiled twin of the USER-GUIDE's loop of your own (compiled, never run). */
class GuideAcquireLoopSnippet {

    interface Controller {
        void stop();
    }

    private volatile boolean running = true;
    private final byte[] key = new byte[0];
    private final byte[] command = new byte[0];

    void lead(CoordinationTransport transport, Controller controller) throws InterruptedException {
        // snippet-begin docs/USER-GUIDE.md: a loop of your own
        try (CoordinationClient client = new CoordinationClient(transport);
             Leadership leadership = client.acquire(Role.of("controller"), MemberId.of("node-1"), Duration.ofMinutes(1))) {
          while (running) {
            // Durable in a quorum (acks=all, in a transaction that also renews the lease)
            // before write returns; refused by the broker once another member took the role.
            leadership.write(new ProducerRecord<>("commands", key, command));
          }
        } catch (FencedException ended) {
          controller.stop();   // the only signal that a leadership ended; ended.endCause() says how
        }
        // snippet-end
    }
}
