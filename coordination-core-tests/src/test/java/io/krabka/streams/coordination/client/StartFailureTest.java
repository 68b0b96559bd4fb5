package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/**
 * A start that cannot arm its first pass (the runtime's timer refuses it) reaches its
 * caller, and the client forgets the role again: RoleContender.start catches what
 * PassLoop.start throws for that. Since the start runs as a lane event, the lane's failure
 * handler swallows it: start() returns, the contender says it runs, and no pass ever comes.
 */
class StartFailureTest {

    @Test
    void aStartThatCannotScheduleItsFirstPassFailsToItsCaller() {
        InMemoryCluster cluster = new InMemoryCluster();
        InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(3));
        CoordinationRuntime runtime =
                CoordinationRuntime.builder().name("closed").build();
        runtime.close();
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, runtime);
        Contender contender = new Contender(client, Role.of("controller"), MemberId.of("n1"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
        });
        try {
            assertThatThrownBy(contender::start).isInstanceOf(RejectedExecutionException.class);
            assertThat(client.engine().roleEntries()).containsEntry("users", 0);
        } finally {
            transport.close();
        }
    }
}
