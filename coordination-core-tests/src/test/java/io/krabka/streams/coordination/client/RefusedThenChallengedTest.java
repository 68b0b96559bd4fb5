package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
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
 * A holder's renewal refused with {@code InvalidTxnStateException} (a loaded broker refuses
 * so for reasons of its own) while a challenger's InitProducerId lands before the holder's
 * describe: the coordinator then reports (P, E + 1, Empty), which under transaction version 2
 * is also the epoch the holder's next lease would have carried. A newer epoch did supersede
 * the holder, so the leadership must end FENCED, never FAILED with "no newer epoch fenced
 * it". An outside review wrote this against a change that took an untouched-looking epoch
 * for the holder's own failure (57e944f, reverted): it failed there. Version 1 is the control.
 */
class RefusedThenChallengedTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport challenger = cluster.transport(TOPIC);
    private final List<AutoCloseable> opened = new ArrayList<>(List.of(memory, challenger));
    private final AtomicBoolean refuseAndChallengeNext = new AtomicBoolean();
    private final AtomicReference<ProducerState> challengerEpoch = new AtomicReference<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    @Test
    void tv2RenewalRefusedThenChallengedEndsFencedNotFailed() {
        assertEndsFenced((short) 2);
    }

    @Test
    void tv1RenewalRefusedThenChallengedEndsFenced() {
        assertEndsFenced((short) 1);
    }

    private void assertEndsFenced(short version) {
        cluster.setTransactionVersion(version);
        Leadership held = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, clock)
                .tryAcquire(ROLE, MemberId.of("a"))
                .orElseThrow();
        held.renew();
        held.renew();
        ProducerState before = memory.describeEpoch(ROLE).orElseThrow();
        refuseAndChallengeNext.set(true);

        FencedException thrown = null;
        try {
            held.renew();
        } catch (FencedException e) {
            thrown = e;
        }
        assertThat(thrown).as("the refused renewal throws").isNotNull();

        ProducerState b = challengerEpoch.get();
        assertThat(b.producerId()).isEqualTo(before.producerId());
        assertThat(b.producerEpoch())
                .as("b's InitProducerId moved the epoch past a's")
                .isGreaterThan(before.producerEpoch());
        assertThat(memory.describeEpoch(ROLE).orElseThrow().state()).isEqualTo("Empty");
        assertThat(thrown.getMessage()).doesNotContain("no newer epoch fenced it");
        assertThat(thrown.endCause())
                .as("b's InitProducerId superseded a: " + thrown.getMessage())
                .isEqualTo(LeadershipEndCause.FENCED);
        assertThat(held.state()).isEqualTo(Leadership.State.FENCED);
    }

    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Object result = call(memory, method, args);
            if (!method.getName().equals("initEpoch")) {
                return result;
            }
            RoleEpoch epoch = (RoleEpoch) result;
            return proxy(RoleEpoch.class, (inner, innerArgs) -> {
                if (inner.getName().equals("transact") && refuseAndChallengeNext.getAndSet(false)) {
                    // The broker refuses the renewal on its own (nothing written); then b's
                    // InitProducerId lands on the idle producer, before a's describe.
                    RoleEpoch minted = challenger.initEpoch(ROLE);
                    opened.add(minted);
                    challengerEpoch.set(challenger.describeEpoch(ROLE).orElseThrow());
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
