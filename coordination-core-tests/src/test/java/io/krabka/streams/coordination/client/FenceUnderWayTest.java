package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.test.runtime.ManualClock;
import io.krabka.streams.coordination.testing.GrantLease;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleRecords;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A full build's {@code GuardedSendIT} on transaction version 1 reported a send fenced by a
 * challenger as {@link CommitOutcomeUnknownException}: the holder's EndTxn was refused as
 * fenced, and its describe came while the coordinator had bumped the epoch for the
 * challenger's InitProducerId but not yet logged the abort ({@code Ongoing} one epoch up).
 * Until the abort is logged and its markers are written, the transaction's own records hold
 * the last stable offset before its lease, so the read cannot pass the lease's place either.
 * The resolver now waits for that abort, as it waits for a {@code Prepare} state, and reports
 * what the log then shows: nothing written.
 *
 * <p>The in-memory cluster aborts at once; the transport here answers the describes and
 * reads of the in-between as Kafka does, for the first few describes after the fence.
 */
class FenceUnderWayTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final String COMMANDS = "commands";

    private final ManualClock clock = new ManualClock();
    private final InMemoryCluster cluster = new InMemoryCluster(clock::millis);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport challenger = cluster.transport(TOPIC);
    private final List<AutoCloseable> opened = new ArrayList<>(List.of(memory, challenger));
    private final AtomicBoolean challengeNextWrite = new AtomicBoolean();
    // How many more describes see the fence under way (the abort not yet logged).
    private final AtomicInteger describesBeforeAbortLogged = new AtomicInteger();
    private final AtomicInteger describes = new AtomicInteger();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    @Test
    void aCommitFencedWhileTheCoordinatorHasNotLoggedTheAbortYetIsReportedAsNothingWritten() {
        cluster.setTransactionVersion((short) 1);
        Leadership held = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, clock)
                .tryAcquire(ROLE, MemberId.of("a"))
                .orElseThrow();
        held.renew();
        challengeNextWrite.set(true);

        assertThatThrownBy(
                        () -> held.write(new ProducerRecord<>(COMMANDS, 0, null, "x".getBytes(StandardCharsets.UTF_8))))
                .isInstanceOf(FencedException.class)
                .hasMessageContaining("nothing of it was written");
        assertThat(describes.get())
                .as("the resolver described again until the abort was logged")
                .isGreaterThan(3);
        assertThat(cluster.records(new TopicPartition(COMMANDS, 0))).isEmpty();
    }

    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            switch (method.getName()) {
                case "describeEpoch" -> {
                    describes.incrementAndGet();
                    @SuppressWarnings("unchecked")
                    Optional<ProducerState> real = (Optional<ProducerState>) call(memory, method, args);
                    if (describesBeforeAbortLogged.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        return real.map(
                                state -> new ProducerState(state.producerId(), state.producerEpoch(), "Ongoing"));
                    }
                    return real;
                }
                case "read" -> {
                    if (describesBeforeAbortLogged.get() > 0) {
                        // The fenced transaction's records hold the last stable offset before its lease.
                        return new RoleRecords(List.<RawRecord>of(), (Long) args[1]);
                    }
                    return call(memory, method, args);
                }
                case "initEpoch" -> {
                    return challengedOnCommit((RoleEpoch) call(memory, method, args));
                }
                default -> {
                    return call(memory, method, args);
                }
            }
        });
    }

    /** The next write's records are acknowledged, a challenger's InitProducerId lands, the EndTxn is fenced. */
    private RoleEpoch challengedOnCommit(RoleEpoch epoch) {
        return proxy(RoleEpoch.class, (method, args) -> {
            if (!method.getName().equals("transact") || !challengeNextWrite.getAndSet(false)) {
                return call(epoch, method, args);
            }
            int partition = RolePartitioner.partitionFor(ROLE, TOPIC.partitions());
            long leaseAt = memory.read(ROLE, 0, Duration.ZERO).nextOffset();
            RoleEpoch minted = challenger.initEpoch(ROLE);
            opened.add(minted);
            try {
                call(epoch, method, args);
            } catch (FencedException fencedEndTxn) {
                describesBeforeAbortLogged.set(3);
                long now = clock.millis();
                // The challenger commits its grant: once the abort is logged, a read passes the lease's place.
                GrantLease.commit(minted, challenger, ROLE, TOPIC, MemberId.of("b"), now);
                throw new CommitOutcomeUnknownException(
                        "the commit of a transaction of role " + ROLE
                                + " was refused as fenced after every record was acknowledged",
                        fencedEndTxn,
                        List.of(
                                new RecordMetadata(
                                        new TopicPartition(TOPIC.name(), partition), leaseAt, 0, now, 10, 40),
                                new RecordMetadata(new TopicPartition(COMMANDS, 0), 0, 0, now, -1, 1)));
            }
            throw new AssertionError("the write's commit was not fenced");
        });
    }
}
