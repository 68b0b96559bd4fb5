package io.krabka.streams.coordination.test.readme;

import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.test.AutoConfigureCoordinationTest;
import io.krabka.streams.coordination.test.CoordinationTestSupport;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

// tag::readme[]
@SpringBootTest(properties = "krabka.coordination.roles=controller")
@AutoConfigureCoordinationTest
class DispatcherTest {
  @Autowired CoordinationTestSupport coordination;
  @Autowired Dispatcher dispatcher;

  @Test
  void theWorkStopsWhenTheRoleIsFenced() {
    coordination.awaitLeader("controller");
    await().until(dispatcher::isRunning);
    coordination.fence("controller");
    await().until(() -> !dispatcher.isRunning());
  }
}
// end::readme[]
