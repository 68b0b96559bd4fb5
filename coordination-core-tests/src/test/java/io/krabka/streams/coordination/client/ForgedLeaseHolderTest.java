package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A started holder that reads a lease it did not write (issue 22 item 1). */
class ForgedLeaseHolderTest {

    private static final Role ROLE = Role.of("dispatcher");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(1);

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);

    @AfterEach
    void close() {
        runtime.close();
    }

    @Test
    void aForgedLeaseNamingAnotherMemberIsOverwrittenAtOnceNotARenewIntervalLater() {
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        // The defaults: a renewal every 10 s, so a forged lease would otherwise stand for up to 10 s.
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, runtime);
        Contender contender = new Contender(client, ROLE, MemberId.of("a"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(
                    Leadership leadership,
                    io.krabka.streams.coordination.LeadershipEndCause cause,
                    Throwable failure) {}
        });
        contender.start();
        assertThat(runtime.advanceUntil(() -> contender.leadership().isPresent(), Duration.ofSeconds(5)))
                .isTrue();
        runtime.advance(Duration.ofSeconds(1));
        Leadership held = contender.leadership().orElseThrow();

        // Anyone who may write the topic: a lease naming mallory with the coordinator's epoch.
        long now = runtime.clock().millis();
        cluster.transport(TOPIC)
                .appendRaw(
                        ROLE,
                        CoordinationCodec.encodeKey(CoordinationKey.lease(ROLE)),
                        CoordinationCodec.encodeValue(new CoordinationRecord.Lease(
                                MemberId.of("mallory"),
                                held.token().producerId(),
                                held.token().producerEpoch(),
                                now,
                                now + 30_000)));
        runtime.advance(Duration.ofMillis(500));

        CoordinationClient observer = new CoordinationClient(cluster.transport(TOPIC), LeaseConfig.DEFAULTS, runtime);
        assertThat(observer.observe(ROLE, Duration.ZERO).holder())
                .as("the newest lease half a second later")
                .contains(MemberId.of("a"));
        assertThat(contender.leadership()).as("the holder keeps the role").isPresent();
        // One term per leadership (issue 22 item 2): observers say the holder's own term, not the forged record's
        // offset.
        assertThat(observer.describe(ROLE).token().term())
                .isEqualTo(held.token().term());
    }
}
