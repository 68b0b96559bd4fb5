package io.krabka.streams.coordination.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.test.annotation.DirtiesContext;

/** The README's test, and the other moves of {@link CoordinationTestSupport}, on the starter's real loop. */
@SpringBootTest(properties = {"krabka.coordination.roles=controller", "krabka.coordination.member-id=n1"})
@AutoConfigureCoordinationTest
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
class CoordinationTestSupportTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Dispatcher.class)
    static class App {}

    /** Role-scoped work that runs until its leadership ends. */
    static class Dispatcher {
        volatile boolean running;
        final List<LeadershipEndCause> ends = new CopyOnWriteArrayList<>();

        @OnLeadership(role = "controller")
        void dispatch() throws InterruptedException {
            running = true;
            try {
                new CountDownLatch(1).await();
            } finally {
                running = false;
            }
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            ends.add(event.cause());
        }
    }

    @Autowired
    CoordinationTestSupport coordination;

    @Autowired
    Dispatcher dispatcher;

    @Test
    void theWorkStopsWhenTheRoleIsFenced() {
        coordination.awaitLeader("controller");
        await().until(() -> dispatcher.running);

        coordination.fence("controller");

        await().until(() -> !dispatcher.running);
        assertThat(coordination.state("controller")).isEqualTo(MemberRoleState.STANDBY);
        // The ended event is published after the work has stopped (LeadershipLoop stops the
        // work first): the work's end does not mean the event was published yet.
        await().until(() -> !dispatcher.ends.isEmpty());
        assertThat(dispatcher.ends).containsExactly(LeadershipEndCause.FENCED);
    }

    @Test
    void anExpiredLeaseEndsTheLeadershipAndTheMemberTakesTheRoleAgain() {
        coordination.awaitLeader("controller");
        await().until(() -> dispatcher.running);

        coordination.expire("controller");

        await().until(() -> dispatcher.ends.contains(LeadershipEndCause.EXPIRED));
        coordination.awaitLeader("controller");
        await().until(() -> dispatcher.running);
    }

    @Test
    void afterAFenceTheMemberTakesTheRoleOnceTheOtherLeaseRunsOut() {
        coordination.awaitLeader("controller");
        coordination.fence("controller");
        coordination.advance(Duration.ofMinutes(2));
        coordination.awaitLeader("controller");
        assertThat(coordination.release("controller")).isTrue();
        assertThat(dispatcher.ends).containsExactly(LeadershipEndCause.FENCED, LeadershipEndCause.RELEASED);
    }
}
