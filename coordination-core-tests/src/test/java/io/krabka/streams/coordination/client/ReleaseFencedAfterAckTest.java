package io.krabka.streams.coordination.client;

import static io.krabka.streams.coordination.testing.Intercepted.call;
import static io.krabka.streams.coordination.testing.Intercepted.proxy;
import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.CommitOutcomeUnknownException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.RolePartitioner;
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
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A review found: the release's tombstone is sent and acknowledged, then the next standby (which
 * acts on the holder leaving the roster) runs InitProducerId before the EndTxn: the EndTxn is
 * refused as fenced. KafkaRoleEpoch now reports that as CommitOutcomeUnknownException (all
 * sends were acknowledged), and the resolver ends the leadership FENCED/FAILED by its own
 * rules, ignoring that this was the release (LeaseTransaction.supersededAs(release) made it
 * RELEASED before). The InMemory epoch is wrapped to throw what KafkaRoleEpoch throws there.
 */
class ReleaseFencedAfterAckTest {

    private static final Role ROLE = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);

    private final ManualRuntime runtime = new ManualRuntime();
    private final InMemoryCluster cluster = new InMemoryCluster(runtime);
    private final InMemoryCoordinationTransport memory = cluster.transport(TOPIC);
    private final InMemoryCoordinationTransport challenger = cluster.transport(TOPIC);
    private final List<AutoCloseable> opened = new ArrayList<>(List.of(memory, challenger));
    // Whether b's grant commits before the holder resolves (else it is still open: the read stops short).
    private boolean bCommits = true;

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        runtime.close();
    }

    @Test
    void aReleaseWhoseTombstoneTheNextStandbyAbortedEndsReleased() {
        CoordinationClient client = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, runtime);
        Leadership held = client.tryAcquire(ROLE, MemberId.of("a")).orElseThrow();
        held.renew();
        held.renew();

        held.close();

        assertThat(held.state())
                .as("a handover during the release is the release, as before today's change")
                .isEqualTo(Leadership.State.RELEASED);
    }

    /** b's grant still open: nothing decides, and close() (AutoCloseable) throws CommitOutcomeUnknownException. */
    @Test
    void aReleaseWhoseTombstoneOutcomeIsUndecidedDoesNotThrowFromClose() {
        bCommits = false;
        CoordinationClient client = new CoordinationClient(holderTransport(), LeaseConfig.DEFAULTS, runtime);
        Leadership held = client.tryAcquire(ROLE, MemberId.of("a")).orElseThrow();
        held.renew();
        held.renew();

        Throwable thrown = null;
        try {
            held.close();
        } catch (RuntimeException e) {
            thrown = e;
        }
        assertThat(thrown)
                .as("close() of a leadership whose release met the next holder")
                .isNull();
        assertThat(held.state()).isEqualTo(Leadership.State.RELEASED);
    }

    private CoordinationTransport holderTransport() {
        return proxy(CoordinationTransport.class, (method, args) -> {
            Object result = call(memory, method, args);
            return method.getName().equals("initEpoch") ? standbyTakesOverDuringRelease((RoleEpoch) result) : result;
        });
    }

    /** On the tombstone's transaction: the sends are acknowledged, b's InitProducerId lands, the EndTxn is fenced. */
    private RoleEpoch standbyTakesOverDuringRelease(RoleEpoch epoch) {
        return proxy(RoleEpoch.class, (method, args) -> {
            if (method.getName().equals("transact")) {
                @SuppressWarnings("unchecked")
                List<ProducerRecord<byte[], byte[]>> batch = (List<ProducerRecord<byte[], byte[]>>) args[0];
                if (batch.get(0).value() == null) {
                    int partition = RolePartitioner.partitionFor(ROLE, TOPIC.partitions());
                    long tombstoneAt = memory.read(ROLE, 0, Duration.ZERO).nextOffset();
                    RoleEpoch minted = challenger.initEpoch(ROLE);
                    opened.add(minted);
                    try {
                        call(epoch, method, args);
                    } catch (FencedException fencedEndTxn) {
                        // b commits its grant lease; the log passes where the aborted tombstone was.
                        if (bCommits) {
                            GrantLease.commit(
                                    minted,
                                    challenger,
                                    ROLE,
                                    TOPIC,
                                    MemberId.of("b"),
                                    runtime.clock().millis());
                        }
                        long now2 = runtime.clock().millis();
                        RecordMetadata acked = new RecordMetadata(
                                new TopicPartition(TOPIC.name(), partition), tombstoneAt, 0, now2, 10, -1);
                        throw new CommitOutcomeUnknownException(
                                "the commit of a transaction of role " + ROLE
                                        + " was refused as fenced after every record was acknowledged",
                                fencedEndTxn,
                                List.of(acked));
                    }
                    throw new AssertionError("the tombstone's commit was not fenced");
                }
            }
            return call(epoch, method, args);
        });
    }
}
