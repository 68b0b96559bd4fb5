package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A grant's epoch comes from a describe right after InitProducerId, which may already show a
 * rival's epoch (kafka-facts 7). If b's InitProducerId lands between a's InitProducerId and
 * a's describe, and a's grant is then refused with {@code InvalidTxnStateException}, the
 * coordinator shows b's epoch, Empty: a must take that as a fence ("lost the challenge") and
 * wait behind b's unexplained epoch, not as its own failure, after which its next pass would
 * challenge at once and fence b, which had won. An outside review wrote this against a change
 * that did the latter (57e944f, reverted): it failed there.
 */
class GrantRefusedAfterRacingDescribeTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport challenger = cluster.transport(TOPIC);
    private final List<AutoCloseable> opened = new ArrayList<>(List.of(memory, challenger));
    private final AtomicBoolean raceFirstGrant = new AtomicBoolean(true);
    private final AtomicReference<ProducerState> bEpoch = new AtomicReference<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    @Test
    void aGrantRefusedAfterAChallengerRacedItsDescribeDoesNotChallengeTheChallengerAtOnce() {
        CoordinationClient client = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, clock);

        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("a's refused grant")
                .isEmpty();
        ProducerState b = bEpoch.get();
        assertThat(b).isNotNull();

        // b won the InitProducerId race; its grant is on its way (not visible yet).
        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("a's next pass, with b's epoch in flight: a must wait, not fence b")
                .isEmpty();
        ProducerState now = memory.describeEpoch(ROLE).orElseThrow();
        assertThat(now.producerEpoch())
                .as("no InitProducerId after b's (b is " + b + ", now " + now + ")")
                .isEqualTo(b.producerEpoch());
    }

    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Object result = call(memory, method, args);
            if (!method.getName().equals("initEpoch")) {
                return result;
            }
            boolean race = raceFirstGrant.getAndSet(false);
            if (race) {
                // b's InitProducerId lands right after a's, before a's describe.
                RoleEpoch minted = challenger.initEpoch(ROLE);
                opened.add(minted);
                bEpoch.set(challenger.describeEpoch(ROLE).orElseThrow());
            }
            RoleEpoch epoch = (RoleEpoch) result;
            AtomicBoolean refuse = new AtomicBoolean(race);
            return proxy(RoleEpoch.class, (inner, innerArgs) -> {
                if (inner.getName().equals("transact") && refuse.getAndSet(false)) {
                    throw new FencedException(
                            "a transaction of role " + ROLE + " was fenced: a newer epoch exists for the role"
                                    + " (InvalidTxnStateException: injected)",
                            new InvalidTxnStateException("injected"));
                }
                return call(epoch, inner, innerArgs);
            });
        });
    }
}
