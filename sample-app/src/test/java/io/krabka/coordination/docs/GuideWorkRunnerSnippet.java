package io.krabka.coordination.docs;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;

/** The compiled twin of the USER-GUIDE's work runner (compiled, never run). */
class GuideWorkRunnerSnippet {

    void run(CoordinationClient client) {
        // snippet-begin docs/USER-GUIDE.md: the work runner
        Contender contender = Contender.running(client, Role.of("dispatcher"), MemberId.of("node-1"), leadership -> {
          while (!Thread.currentThread().isInterrupted()) {
            leadership.write(List.of(nextCommand()));   // fenced at once once another member took the role
          }
        });
        contender.start();
        // snippet-end
    }

    private ProducerRecord<byte[], byte[]> nextCommand() {
        return new ProducerRecord<>("commands", new byte[0]);
    }
}
