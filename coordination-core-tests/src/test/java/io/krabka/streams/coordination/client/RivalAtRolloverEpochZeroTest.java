package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A grant refused as fenced at epoch 0, Empty is the member's own failure only when that is
 * the producer id it got (FreshGrantRefusedTest). At a producer-id rollover a rival's
 * InitProducerId mints a new id at epoch 0: member a's grant at (P, 32766) is fenced by rival
 * b's challenge, and a must wait behind b's epoch, not take it for its own and fence b's
 * challenge in flight (an outside review of the first version of that rule).
 */
class RivalAtRolloverEpochZeroTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final InMemoryCoordinationTransport memoryA = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport memoryB = cluster.transport(TOPIC);
    private final AtomicBoolean rivalOnce = new AtomicBoolean(true);
    private final AtomicReference<RoleEpoch> rival = new AtomicReference<>();

    @AfterEach
    void close() {
        memoryA.close();
        memoryB.close();
    }

    @Test
    void aRivalsFreshProducerIdAtEpochZeroIsNotTakenForTheMembersOwn() {
        // A role whose epoch is near the rollover (a dead holder's many TV2 commits).
        for (int i = 0; i < Short.MAX_VALUE - 1; i++) {
            memoryB.initEpoch(ROLE).close();
        }
        ProducerState before = memoryB.describeEpoch(ROLE).orElseThrow();
        assertThat(before.producerEpoch()).isEqualTo((short) (Short.MAX_VALUE - 2));

        CoordinationClient a = new CoordinationClient(racingTransport(), LeaseConfig.DEFAULTS, clock);
        Optional<Leadership> first = a.tryAcquire(ROLE, MemberId.of("a"));
        assertThat(first).as("a's grant, fenced by b's InitProducerId").isEmpty();
        ProducerState rivals = memoryB.describeEpoch(ROLE).orElseThrow();
        assertThat(rivals.producerId()).as("b's InitProducerId rolled the id").isNotEqualTo(before.producerId());
        assertThat(rivals.producerEpoch()).isZero();
        assertThat(rivals.state()).isEqualTo("Empty");

        Optional<Leadership> second = a.tryAcquire(ROLE, MemberId.of("a"));
        assertThat(second)
                .as("b's challenge is in flight at (%s, 0): a must wait, not fence it", rivals.producerId())
                .isEmpty();
    }

    private CoordinationTransport racingTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Object result = call(memoryA, method, args);
            if (!method.getName().equals("initEpoch")) {
                return result;
            }
            RoleEpoch epoch = (RoleEpoch) result;
            return proxy(RoleEpoch.class, (inner, innerArgs) -> {
                if (inner.getName().equals("transact") && rivalOnce.getAndSet(false)) {
                    // Rival b's challenge: its InitProducerId lands before a's grant commits.
                    rival.set(memoryB.initEpoch(ROLE));
                }
                return call(epoch, inner, innerArgs);
            });
        });
    }
}
