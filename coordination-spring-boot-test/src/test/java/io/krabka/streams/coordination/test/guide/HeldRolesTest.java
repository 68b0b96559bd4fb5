package io.krabka.streams.coordination.test.guide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.OnLeadership;
import io.krabka.streams.coordination.test.AutoConfigureCoordinationTest;
import io.krabka.streams.coordination.test.CoordinationTestSupport;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.test.annotation.DirtiesContext;

/**
 * The user guide's {@link HeldRoles} on the starter's real loop: the events carry what the
 * guide says (role, member, token and leadership; cause and failure), a grant comes before
 * the role's work starts and an end after it stopped, and the listener's map follows the
 * roles this member holds. The guide's application, {@link GuideApp}, has it as a component.
 */
@SpringBootTest(classes = GuideApp.class,
        properties = {"krabka.coordination.roles=controller,reports", "krabka.coordination.member-id=n1"})
@AutoConfigureCoordinationTest
@Import(HeldRolesTest.Work.class)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
class HeldRolesTest {

    private static final Role CONTROLLER = Role.of("controller");
    private static final Role REPORTS = Role.of("reports");

    /** The roles' work, and every event in the order it came, with the work's starts and stops among them. */
    static class Work {
        final List<Object> seen = new CopyOnWriteArrayList<>();
        final AtomicBoolean reportsFailed = new AtomicBoolean();

        @OnLeadership(role = "controller")
        void dispatch() throws InterruptedException {
            seen.add("controller work started");
            try {
                new CountDownLatch(1).await();                // runs until its leadership ends
            } finally {
                seen.add("controller work stopped");
            }
        }

        @OnLeadership(role = "reports")
        void report() throws InterruptedException {
            if (reportsFailed.compareAndSet(false, true)) {
                throw new IllegalStateException("injected: the reports failed");
            }
            new CountDownLatch(1).await();
        }

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            seen.add(event);
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            seen.add(event);
        }

        List<Object> of(Role role) {
            return seen.stream().filter(seen -> seen instanceof LeadershipGrantedEvent granted ? granted.role().equals(role)
                    : seen instanceof LeadershipEndedEvent ended ? ended.role().equals(role)
                    : ((String) seen).startsWith(role.name())).toList();
        }
    }

    @Autowired
    CoordinationTestSupport coordination;

    @Autowired
    LeadershipLoop leadershipLoop;

    @Autowired
    HeldRoles heldRoles;

    @Autowired
    Work work;

    @Test
    void aGrantComesBeforeTheWorkStartsAndAnEndAfterItStopped() {
        coordination.awaitLeader("controller");
        await().until(() -> work.seen.contains("controller work started"));
        long term = leadershipLoop.leadership(CONTROLLER).orElseThrow().term();
        assertThat(heldRoles.terms()).containsEntry(CONTROLLER, term);

        coordination.fence("controller");

        await().until(() -> work.of(CONTROLLER).size() == 4);
        List<Object> controller = work.of(CONTROLLER);
        assertThat(controller.get(0)).isInstanceOfSatisfying(LeadershipGrantedEvent.class, granted -> {
            assertThat(granted.role()).isEqualTo(CONTROLLER);
            assertThat(granted.member()).isEqualTo(MemberId.of("n1"));
            assertThat(granted.token().term()).isEqualTo(term);
            assertThat(granted.leadership().term()).isEqualTo(term);
        });
        assertThat(controller.subList(1, 3)).containsExactly("controller work started", "controller work stopped");
        assertThat(controller.get(3)).isInstanceOfSatisfying(LeadershipEndedEvent.class, ended -> {
            assertThat(ended.role()).isEqualTo(CONTROLLER);
            assertThat(ended.member()).isEqualTo(MemberId.of("n1"));
            assertThat(ended.token().term()).isEqualTo(term);
            assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FENCED);
        });
        assertThat(heldRoles.terms()).doesNotContainKey(CONTROLLER);
    }

    @Test
    void workThatThrowsEndsTheLeadershipFailedWithWhatItThrew() {
        await().until(() -> work.of(REPORTS).stream().filter(LeadershipGrantedEvent.class::isInstance).count() == 2);
        coordination.awaitLeader("reports");

        assertThat(work.of(REPORTS).get(1)).isInstanceOfSatisfying(LeadershipEndedEvent.class, ended -> {
            assertThat(ended.cause()).isEqualTo(LeadershipEndCause.FAILED);
            assertThat(ended.failure()).get().extracting(Throwable::getMessage).isEqualTo("injected: the reports failed");
        });
        long term = leadershipLoop.leadership(REPORTS).orElseThrow().term();
        await().until(() -> Long.valueOf(term).equals(heldRoles.terms().get(REPORTS)));

        assertThat(coordination.release("reports")).isTrue();
        assertThat(work.of(REPORTS).get(3)).isInstanceOfSatisfying(LeadershipEndedEvent.class, ended -> {
            assertThat(ended.cause()).isEqualTo(LeadershipEndCause.RELEASED);
            assertThat(ended.failure()).isEmpty();
        });
    }

    @Test
    @SuppressWarnings("removal")
    void theDeprecatedGettersAnswerAsTheAccessors() {
        coordination.awaitLeader("controller");
        coordination.fence("controller");
        await().until(() -> work.of(CONTROLLER).stream().anyMatch(LeadershipEndedEvent.class::isInstance));

        LeadershipGrantedEvent granted = (LeadershipGrantedEvent) work.of(CONTROLLER).get(0);
        assertThat(List.of(granted.getRole(), granted.getMember(), granted.getToken(), granted.getLeadership()))
                .containsExactly(granted.role(), granted.member(), granted.token(), granted.leadership());
        LeadershipEndedEvent ended = work.of(CONTROLLER).stream().filter(LeadershipEndedEvent.class::isInstance)
                .map(LeadershipEndedEvent.class::cast).findFirst().orElseThrow();
        assertThat(List.of(ended.getRole(), ended.getMember(), ended.getToken(), ended.getCause(), ended.getFailure()))
                .containsExactly(ended.role(), ended.member(), ended.token(), ended.cause(), ended.failure());
    }
}
