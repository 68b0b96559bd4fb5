package io.krabka.streams.coordination.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.CoordinationConfigurationException;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.RecordKind;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.test.memory.InMemoryCoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Contenders on their own threads, on the in-memory cluster. */
class ContenderTest {

    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(7);
    private static final Duration SLOW_STOP = Duration.ofSeconds(1);

    @Test
    void stoppingFiftyHoldersTakesAboutOneSlowWorkStopNotFifty() {
        InMemoryCluster cluster = new InMemoryCluster();
        InMemoryCoordinationTransport transport = cluster.transport(TOPIC);
        CoordinationClient client = new CoordinationClient(transport, LeaseConfig.DEFAULTS, InstantSource.system());
        Map<Role, LeadershipEndCause> ends = new ConcurrentHashMap<>();
        List<Contender> contenders = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Role role = Role.of("role-" + i);
            contenders.add(new Contender(client, role, MemberId.of("n1"), new Contender.Listener() {
                @Override
                public void granted(Leadership leadership) {}

                @Override
                public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                    try {
                        // Work that takes its whole stop timeout to finish.
                        TimeUnit.MILLISECONDS.sleep(SLOW_STOP.toMillis());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    ends.put(leadership.role(), cause);
                }
            }));
        }
        contenders.forEach(Contender::start);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> contenders.stream().allMatch(c -> c.leadership().isPresent()));

        long start = System.nanoTime();
        contenders.forEach(Contender::stop);
        contenders.forEach(
                c -> assertThat(c.awaitStopped(Duration.ofSeconds(30))).isTrue());
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(took).as("50 slow stops in parallel").isLessThan(SLOW_STOP.multipliedBy(10));
        assertThat(ends)
                .hasSize(50)
                .allSatisfy((role, cause) -> assertThat(cause).isEqualTo(LeadershipEndCause.RELEASED));
        // Each released with a tombstone and left its roster.
        for (Contender contender : contenders) {
            LeadershipStatus status = client.observe(contender.role(), Duration.ZERO);
            assertThat(status.lease()).isEmpty();
            assertThat(status.roster()).extracting(RankedMember::member).isEmpty();
        }
        transport.close();
    }

    @Test
    void aStandbyThatTakesOverAfterAReleaseActsOnWhatItReadsAsHolderNotOnWhatItReadAsStandby() {
        InMemoryCluster cluster = new InMemoryCluster();
        Role role = Role.of("controller");
        Map<String, CoordinationClient> clients = new ConcurrentHashMap<>();
        Map<String, Contender> contenders = new ConcurrentHashMap<>();
        for (String member : List.of("a", "b")) {
            CoordinationClient client =
                    new CoordinationClient(cluster.transport(TOPIC), LeaseConfig.DEFAULTS, InstantSource.system());
            clients.put(member, client);
            contenders.put(member, new Contender(client, role, MemberId.of(member), new Contender.Listener() {
                @Override
                public void granted(Leadership leadership) {}

                @Override
                public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {}
            }));
        }
        contenders.get("a").start();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> contenders.get("a").leadership().isPresent());
        contenders.get("b").start();
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        clients.get("a").observe(role, Duration.ZERO).roster().size() == 2);

        assertThat(contenders.get("a").release()).isTrue();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> contenders.get("b").leadership().isPresent());
        long term = contenders.get("b").leadership().orElseThrow().term();

        // The standby's last read showed a's lease, then a's tombstone. Acting on either as
        // holder would be a false alarm: a describe and a suspicious record, or a renewal
        // answering a tombstone "that b did not write". Within the first renew interval b
        // writes its grant lease and one confirming lease, nothing more.
        TopicPartition partition =
                new TopicPartition(TOPIC.name(), RolePartitioner.partitionFor(role, TOPIC.partitions()));
        await().during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(2))
                .until(() -> leasesFrom(cluster.records(partition), term) == 2
                        && clients.get("b").suspiciousRecords() == 0);
        contenders.values().forEach(Contender::stop);
    }

    @Test
    void workThatFailsOnItsOwnConfigurationReleasesTheRoleWithATombstone() {
        InMemoryCluster cluster = new InMemoryCluster();
        Role role = Role.of("orders-pipeline");
        // A lease so long that only a tombstone lets the standby take over within the wait below.
        LeaseConfig lease = new LeaseConfig(Duration.ofMinutes(5), Duration.ofSeconds(10), Duration.ofSeconds(1));
        Map<String, LeadershipEndCause> ends = new ConcurrentHashMap<>();
        Map<String, Contender> contenders = new ConcurrentHashMap<>();
        for (String member : List.of("a", "b")) {
            CoordinationClient client = new CoordinationClient(cluster.transport(TOPIC), lease, InstantSource.system());
            contenders.put(member, new Contender(client, role, MemberId.of(member), new Contender.Listener() {
                @Override
                public void granted(Leadership leadership) {}

                @Override
                public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                    ends.put(member, cause);
                }
            }));
        }
        contenders.get("a").start();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> contenders.get("a").leadership().isPresent());
        contenders.get("b").start();
        Leadership held = contenders.get("a").leadership().orElseThrow();

        // What a @LeaderListener's pipeline throws when its input topic does not exist yet:
        // the work's own configuration, not the coordination topic's.
        contenders
                .get("a")
                .relinquish(held, new CoordinationConfigurationException("the input topic(s) [orders] do not exist"));

        await().atMost(Duration.ofSeconds(10)).until(() -> ends.containsKey("a"));
        assertThat(ends.get("a")).isEqualTo(LeadershipEndCause.FAILED);
        assertThat(held.state()).isEqualTo(Leadership.State.RELEASED);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> contenders.get("b").leadership().isPresent());
        contenders.values().forEach(Contender::stop);
    }

    @Test
    void listenersOnAnInlineExecutorRunOutsideTheContendersLock() {
        InMemoryCluster cluster = new InMemoryCluster();
        CoordinationClient client =
                new CoordinationClient(cluster.transport(TOPIC), LeaseConfig.DEFAULTS, InstantSource.system());
        AtomicReference<Contender> self = new AtomicReference<>();
        List<Boolean> underLock = new CopyOnWriteArrayList<>();
        Contender contender = new Contender(
                client,
                Role.of("inline"),
                MemberId.of("n1"),
                new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        underLock.add(Thread.holdsLock(self.get()));
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        underLock.add(Thread.holdsLock(self.get()));
                    }
                },
                Runnable::run);
        self.set(contender);
        contender.start();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> contender.leadership().isPresent());
        contender.close();

        assertThat(underLock)
                .as("whether each callback held the contender's lock")
                .containsExactly(false, false);
    }

    private static long leasesFrom(List<RawRecord> records, long fromOffset) {
        return records.stream()
                .filter(record -> record.offset() >= fromOffset && record.value() != null)
                .filter(record -> CoordinationCodec.decodeKey(record.key()).kind() == RecordKind.LEASE)
                .count();
    }
}
