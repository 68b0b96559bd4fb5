package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A loaded Kafka 4.1 broker refused a fresh role's first grant with
 * {@code InvalidTxnStateException} while the coordinator still showed the member's own new
 * producer id at epoch 0, {@code Empty} (the Spring starter's 1 000-role run, issue 39). The
 * member took it for a lost race, its own epoch looked like a rival's challenge in flight,
 * and the role went without a holder for a whole lease. Epoch 0 cannot be a later
 * InitProducerId's, so the next challenge goes ahead; any other epoch still waits
 * ({@link GrantRefusedAfterRacingDescribeTest}).
 */
class FreshGrantRefusedTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final AtomicInteger refusals = new AtomicInteger();

    @AfterEach
    void close() {
        memory.close();
    }

    @Test
    void aFreshRolesGrantRefusedByTheBrokerAloneIsChallengedAgainAtOnce() {
        refusals.set(1);
        CoordinationClient client = new CoordinationClient(refusingTransport(), LeaseConfig.DEFAULTS, clock);

        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("the refused grant")
                .isEmpty();
        assertThat(memory.describeEpoch(ROLE).orElseThrow().producerEpoch())
                .as("the coordinator after the refusal")
                .isZero();

        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("the next pass, with no one else about: no lease to wait out")
                .isPresent();
    }

    @Test
    void aRefusalAtALaterEpochStillWaits() {
        CoordinationClient client = new CoordinationClient(refusingTransport(), LeaseConfig.DEFAULTS, clock);
        client.tryAcquire(ROLE, MemberId.of("a")).orElseThrow().close();

        refusals.set(1);
        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("the refused grant")
                .isEmpty();
        assertThat(memory.describeEpoch(ROLE).orElseThrow().producerEpoch())
                .as("the coordinator after the refusal")
                .isPositive();

        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("an epoch above 0 may be a rival's challenge in flight")
                .isEmpty();
    }

    /** The in-memory transport, whose grants are refused as a loaded broker refused one, while {@link #refusals} lasts. */
    private CoordinationTransport refusingTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Object result = call(memory, method, args);
            if (!method.getName().equals("initEpoch")) {
                return result;
            }
            RoleEpoch epoch = (RoleEpoch) result;
            return proxy(RoleEpoch.class, (inner, innerArgs) -> {
                if (inner.getName().equals("transact") && refusals.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
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
