package io.krabka.coordination.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.test.AutoConfigureCoordinationTest;
import io.krabka.streams.coordination.test.CoordinationTestSupport;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The compiled twin of the USER-GUIDE's test of an @OnLeadership method. Inner classes: the
 * test runner skips them here (coordination-spring-boot-test's CoordinationTestSupportTest runs it).
 */
class GuideDispatcherTestSnippet {

    /** What the guide's test expects of the application's dispatcher. */
    class Dispatcher {
        volatile boolean running;
    }

    // snippet-begin docs/USER-GUIDE.md: testing an @OnLeadership method
    @SpringBootTest(properties = "krabka.coordination.roles=controller")
    @AutoConfigureCoordinationTest
    class DispatcherTest {
      @Autowired CoordinationTestSupport coordination;
      @Autowired Dispatcher dispatcher;            // runs an @OnLeadership(role = "controller") method

      @Test
      void theWorkStopsWhenTheRoleIsFenced() {
        coordination.awaitLeader("controller");
        await().until(() -> dispatcher.running);
        coordination.fence("controller");
        await().until(() -> !dispatcher.running);
        assertThat(coordination.state("controller")).isEqualTo(MemberRoleState.STANDBY);
      }
    }
    // snippet-end
}
