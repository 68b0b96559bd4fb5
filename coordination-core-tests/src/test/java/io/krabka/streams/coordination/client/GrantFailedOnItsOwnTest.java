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
 * The benchmark's 1 000-role member once had one grant's first produce refused with
 * {@code InvalidTxnStateException} by a loaded broker, while the coordinator still showed the
 * member's own fresh epoch, untouched and {@code Empty}: no one else had run InitProducerId.
 * The library took the error as a fence ("lost the challenge to a later InitProducerId"),
 * so the epoch it had moved itself looked unexplained and the lone member waited a whole
 * lease (30 s) before it took its own role. A refusal that leaves the member's epoch as it
 * was is the member's own failure: it challenges again on its next pass.
 */
class GrantFailedOnItsOwnTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final AtomicInteger refusals = new AtomicInteger(1);

    @AfterEach
    void close() {
        memory.close();
    }

    @Test
    void aGrantRefusedWhileItsEpochIsUntouchedIsRetriedAtOnceNotAfterALease() {
        CoordinationClient client = new CoordinationClient(refusingTransport(), LeaseConfig.DEFAULTS, clock);

        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("the refused grant")
                .isEmpty();
        assertThat(refusals.get()).as("the grant was refused once").isZero();

        assertThat(client.tryAcquire(ROLE, MemberId.of("a")))
                .as("the next pass, with no time passed: nothing but its own epoch stands in the way")
                .isPresent();
    }

    /** The first grant's transaction is refused as Kafka refused it: InvalidTxnStateException, nothing written. */
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
