package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.internal.LeadershipTerm;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualRuntime;
import io.krabka.streams.coordination.testing.GrantLease;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A challenger's InitProducerId that lands between a holder's commit and the describe by
 * which the holder learns the epoch of a commit it did not predict: the holder must not
 * take the challenger's epoch for its own, or it no longer sees that a newer epoch exists.
 */
class ChallengerAfterCommitTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport challenger = cluster.transport(TOPIC);
    private final List<AutoCloseable> opened = new ArrayList<>(List.of(memory, challenger));
    // Run just before the holder's next bounded describe (the describe after a commit whose
    // epoch it did not predict), then cleared.
    private final AtomicReference<Runnable> beforeDescribe = new AtomicReference<>();
    // Set: the holder's producer fails beyond recovery (not fenced) on its next transaction.
    private final AtomicBoolean producerBreaks = new AtomicBoolean();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        runtime.close();
    }

    /** A challenger's InitProducerId, as {@link ElectionPass} runs it. */
    private RoleEpoch challengerMints() {
        RoleEpoch minted = challenger.initEpoch(ROLE);
        opened.add(minted);
        return minted;
    }

    /** A holder whose first renewal after this is not predicted (its producer reconnected), so it describes after it. */
    private Leadership holderAboutToDescribe() {
        CoordinationClient client = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, runtime);
        Leadership held = client.tryAcquire(ROLE, MemberId.of("a")).orElseThrow();
        assertThat(client.describe(ROLE).current())
                .as("the grant's confirm learned the step")
                .isTrue();
        cluster.reconnectProducers();
        return held;
    }

    /**
     * The renewal commits, then its describe sees the challenger's epoch, which it does not
     * take for its own; the lease it wrote is behind, so it confirms at once, and that
     * confirming transaction is fenced. The renewal itself committed, so it returns.
     */
    @Test
    void aHolderWhoseDescribeFollowedAChallengersInitProducerIdStillFindsItIsFenced() {
        Leadership held = holderAboutToDescribe();
        beforeDescribe.set(this::challengerMints);

        held.renew();
        ProducerState minted = challenger.describeEpoch(ROLE).orElseThrow();
        assertThat(held.state()).isEqualTo(Leadership.State.FENCED);
        assertThat(held.token().producerEpoch())
                .as("the token never carries the challenger's epoch")
                .isLessThan(minted.producerEpoch());
    }

    /** As above, but the confirming transaction's producer fails instead: the coordinator's epoch still says fenced. */
    @Test
    void aHolderWhoseProducerThenFailsEndsFencedNotFailed() {
        Leadership held = holderAboutToDescribe();
        beforeDescribe.set(() -> {
            challengerMints();
            producerBreaks.set(true);
        });

        held.renew();
        assertThat(held.state()).isEqualTo(Leadership.State.FENCED);
        assertThatThrownBy(() -> held.write(List.of()))
                .isInstanceOfSatisfying(
                        FencedException.class,
                        fenced -> assertThat(fenced.endCause()).isEqualTo(LeadershipEndCause.FENCED));
    }

    /** The same steps without a challenger: the describe teaches the holder its own epoch, as before. */
    @Test
    void withoutAChallengerTheDescribeTeachesItsOwnEpoch() {
        Leadership held = holderAboutToDescribe();
        held.renew();
        assertThat(held.token().producerEpoch())
                .isEqualTo(memory.describeEpoch(ROLE).orElseThrow().producerEpoch());
        assertThat(((LeadershipTerm) held).confirmFenced()).isFalse();
        // One more lease learns the step again (the features changed during the last), the next is predicted.
        held.renew();
        held.renew();
        InMemoryCoordinationTransport observer = cluster.transport(TOPIC);
        opened.add(observer);
        assertThat(new CoordinationClient(observer, LeaseConfig.DEFAULTS, runtime)
                        .describe(ROLE)
                        .current())
                .as("the next lease carries a predicted epoch again")
                .isTrue();

        producerBreaks.set(true);
        assertThatThrownBy(held::renew)
                .isInstanceOfSatisfying(
                        FencedException.class,
                        failed -> assertThat(failed.endCause()).isEqualTo(LeadershipEndCause.FAILED));
    }

    /**
     * A started holder reads the challenger's grant lease, asks the coordinator, and ends as
     * fenced; it does not report the lease as one no holder wrote.
     */
    @Test
    void aStartedHolderTakesTheChallengersGrantForAHandoverNotForAForgery() {
        CoordinationClient client = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, runtime);
        List<LeadershipEndCause> ended = new CopyOnWriteArrayList<>();
        Contender contender = new Contender(client, ROLE, MemberId.of("a"), new Contender.Listener() {
            @Override
            public void granted(Leadership leadership) {}

            @Override
            public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                ended.add(cause);
            }
        });
        contender.start();
        assertThat(runtime.advanceUntil(() -> contender.leadership().isPresent(), Duration.ofSeconds(5)))
                .isTrue();
        runtime.advance(Duration.ofSeconds(1));
        cluster.reconnectProducers();
        // During the holder's next renewal: b mints an epoch and commits its grant lease.
        beforeDescribe.set(() -> {
            RoleEpoch minted = challengerMints();
            GrantLease.commit(
                    minted,
                    challenger,
                    ROLE,
                    TOPIC,
                    MemberId.of("b"),
                    runtime.clock().millis());
        });

        assertThat(runtime.advanceUntil(() -> !ended.isEmpty(), Duration.ofSeconds(30)))
                .isTrue();
        assertThat(ended).containsExactly(LeadershipEndCause.FENCED);
        assertThat(client.suspiciousRecords())
                .as("b's grant lease is no forgery")
                .isZero();
    }

    /** The in-memory transport, with the challenger's InitProducerId and the producer failure above injected. */
    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Runnable before = method.getName().equals("describeEpoch") && args.length == 2
                    ? beforeDescribe.getAndSet(null)
                    : null;
            if (before != null) {
                before.run();
            }
            Object result = call(memory, method, args);
            return method.getName().equals("initEpoch") ? breakable((RoleEpoch) result) : result;
        });
    }

    private RoleEpoch breakable(RoleEpoch epoch) {
        AtomicBoolean broken = new AtomicBoolean();
        return proxy(RoleEpoch.class, (method, args) -> {
            if (method.getName().equals("transact") && producerBreaks.get()) {
                broken.set(true);
                throw new CoordinationException("injected: the producer of role " + ROLE + " failed beyond recovery");
            }
            if (method.getName().equals("usable")) {
                return !broken.get() && epoch.usable();
            }
            return call(epoch, method, args);
        });
    }
}
