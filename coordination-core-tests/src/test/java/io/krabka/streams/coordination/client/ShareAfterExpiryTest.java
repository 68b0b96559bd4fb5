package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.ListenerLog;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A member's share counts a role it holds by what it knows, not by its last read: once its
 * own lease ran out, the role is not counted among those it holds. It was, until the lease
 * in its fold counted as abandoned some seconds later (the starter's
 * {@code krabka.coordination.share.held} showed the role held for ~4 s after the
 * leadership ended EXPIRED: an outside review of the starter, finding 12).
 */
class ShareAfterExpiryTest {

    private static final Role ROLE = Role.of("dispatcher");
    private static final MemberId A = MemberId.of("a");
    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofMillis(500));

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final ListenerLog log = new ListenerLog();

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aRoleWhoseLeaseRanOutIsNotCountedAsHeldByItsFormerHolder() throws Exception {
        CoordinationClient client =
                new CoordinationClient(cluster.transport(TopicSpec.DEFAULTS.withPartitions(1)), CONFIG, runtime);
        Contender a = new Contender(client, ROLE, A, log.of("a"));
        a.start();
        assertThat(runtime.advanceUntil(() -> a.leadership().isPresent(), Duration.ofSeconds(10)))
                .isTrue();
        assertThat(client.share(A).held()).isEqualTo(1);

        // The coordinator stops answering: the holder cannot renew and its lease runs out.
        InMemoryCluster.Fault frozen = cluster.freezeCoordinator(ROLE);
        try {
            assertThat(runtime.advanceUntil(() -> log.events().contains("a ended EXPIRED"), Duration.ofSeconds(10)))
                    .isTrue();
            assertThat(client.share(A).held())
                    .as("share of a member whose only lease ran out (%s)", log.events())
                    .isZero();
        } finally {
            frozen.close();
        }
    }
}
