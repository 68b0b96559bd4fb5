package io.krabka.streams.coordination.test.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.test.AutoConfigureCoordinationTest;
import io.krabka.streams.coordination.test.CoordinationTestSupport;
import java.time.Duration;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

// tag::readme[]
@SpringBootTest(properties = "krabka.coordination.roles=controller")
@AutoConfigureCoordinationTest
class RequestDispatcherTest {
  @Autowired CoordinationTestSupport coordination;

  @Test
  void eachRequestIsDispatchedOnceAcrossAFailover() {
    coordination.awaitLeader("controller");
    coordination.send("requests", "device-7", "open");
    coordination.awaitProcessed("controller");      // the command and the offset committed together

    coordination.fence("controller");               // another member takes the role
    coordination.send("requests", "device-7", "close");
    coordination.advance(Duration.ofMinutes(2));    // the other's lease runs out: this member takes the role back
    coordination.awaitLeader("controller");
    coordination.awaitProcessed("controller");

    assertThat(coordination.records("commands")).extracting(ConsumerRecord::value)
        .containsExactly("do open", "do close");    // each request once
  }
}
// end::readme[]
