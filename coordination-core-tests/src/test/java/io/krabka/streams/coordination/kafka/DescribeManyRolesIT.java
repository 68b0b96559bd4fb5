package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.RankedMember;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link CoordinationClient#describe(Collection)} on a real broker: many roles in one
 * DescribeTransactions and one read of all their partitions, with the same answers as describing
 * each role alone.
 */
class DescribeManyRolesIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int PARTITIONS = 5;
    private static KafkaTestCluster cluster;

    private final TopicSpec topic = TopicSpec.DEFAULTS
            .withReplicationFactor(1)
            .withPartitions(PARTITIONS)
            .withName("describe-many-" + UUID.randomUUID().toString().substring(0, 8));
    private final List<AutoCloseable> opened = new ArrayList<>();
    /** The ids of each DescribeTransactions the observer's Admin sent. */
    private final List<List<String>> describeCalls = new CopyOnWriteArrayList<>();
    /** The partitions of each read the observer's transport made (one for a read, several for a readAll). */
    private final List<List<Integer>> reads = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void takeSharedCluster() {
        cluster = KafkaTestCluster.shared();
    }

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private <T extends AutoCloseable> T open(T closeable) {
        opened.add(closeable);
        return closeable;
    }

    @Test
    void manyRolesAreDescribedWithOneDescribeTransactionsAndOneReadOfTheirPartitions() {
        CoordinationClient holder = open(
                new CoordinationClient(open(cluster.transport(topic)), LeaseConfig.DEFAULTS, InstantSource.system()));
        CoordinationTransport other = open(cluster.transport(topic));
        List<Role> held = roles("held", 12);
        List<Role> waiting = roles("waiting", 8);
        List<Role> unknown = roles("unknown", 5);
        Map<Role, Leadership> leaderships = held.stream()
                .collect(Collectors.toMap(
                        role -> role,
                        role -> holder.tryAcquire(role, MemberId.of("a")).orElseThrow()));
        waiting.forEach(role -> other.register(role, MemberId.of("b"), 1));
        List<Role> all = new ArrayList<>(held);
        all.addAll(waiting);
        all.addAll(unknown);
        CoordinationClient observer =
                open(new CoordinationClient(open(countingTransport()), LeaseConfig.DEFAULTS, InstantSource.system()));

        Map<Role, LeadershipStatus> described = observer.describe(all);

        assertThat(describeCalls).hasSize(1);
        assertThat(describeCalls.get(0))
                .containsExactlyInAnyOrderElementsOf(
                        all.stream().map(Role::name).toList());
        assertThat(reads).hasSize(1);
        assertThat(reads.get(0))
                .doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(all.stream()
                        .map(r -> RolePartitioner.partitionFor(r, PARTITIONS))
                        .collect(Collectors.toSet()));
        assertThat(described.keySet()).containsExactlyElementsOf(all);
        for (Role role : held) {
            LeadershipStatus status = described.get(role);
            assertThat(status.holder()).as("holder of %s", role).contains(MemberId.of("a"));
            assertThat(status.current()).as("current of %s", role).isTrue();
            assertThat(status.token().term()).isEqualTo(leaderships.get(role).term());
        }
        for (Role role : waiting) {
            LeadershipStatus status = described.get(role);
            assertThat(status.holder()).isEmpty();
            assertThat(status.coordinator()).isEmpty();
            assertThat(status.roster()).extracting(RankedMember::member).containsExactly(MemberId.of("b"));
        }
        for (Role role : unknown) {
            LeadershipStatus status = described.get(role);
            assertThat(status.lease()).isEmpty();
            assertThat(status.roster()).isEmpty();
            assertThat(status.coordinator()).isEmpty();
        }

        // Each role alone says the same; the next batch folds only what is new.
        Role alone = held.get(0);
        LeadershipStatus single = observer.describe(alone);
        assertThat(single.holder()).isEqualTo(described.get(alone).holder());
        assertThat(single.current()).isTrue();
        leaderships.values().forEach(Leadership::renew);
        Leadership released = leaderships.get(held.get(1));
        released.close();
        describeCalls.clear();
        reads.clear();

        Map<Role, LeadershipStatus> again = observer.describe(all);

        assertThat(describeCalls).hasSize(1);
        assertThat(reads).hasSize(1);
        assertThat(reads.get(0)).doesNotHaveDuplicates().hasSizeLessThanOrEqualTo(PARTITIONS);
        for (Role role : held) {
            LeadershipStatus status = again.get(role);
            if (role.equals(released.role())) {
                assertThat(status.holder())
                        .as("holder of %s after its release", role)
                        .isEmpty();
                assertThat(status.current()).isFalse();
                continue;
            }
            assertThat(status.current())
                    .as("current of %s after a renewal", role)
                    .isTrue();
            assertThat(status.token().term()).isEqualTo(leaderships.get(role).term());
            assertThat(status.readUpTo()).isGreaterThan(described.get(role).readUpTo());
        }
    }

    private static List<Role> roles(String prefix, int count) {
        List<Role> roles = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            roles.add(Role.of(
                    prefix + "-" + i + "-" + UUID.randomUUID().toString().substring(0, 6)));
        }
        return roles;
    }

    /** A Kafka transport whose Admin records each DescribeTransactions, and which records each read. */
    private CoordinationTransport countingTransport() {
        Map<String, Object> connection = cluster.connection();
        Admin real = Admin.create(KafkaCoordinationTransport.adminSettings(connection, TIMEOUT));
        Admin admin = (Admin) Proxy.newProxyInstance(
                Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                    if (method.getName().equals("describeTransactions")) {
                        @SuppressWarnings("unchecked")
                        Collection<String> ids = (Collection<String>) args[0];
                        describeCalls.add(List.copyOf(ids));
                    }
                    return invoke(real, method, args);
                });
        KafkaCoordinationTransport kafka = new KafkaCoordinationTransport(
                admin,
                new KafkaProducer<>(KafkaCoordinationTransport.registrarSettings(connection, TIMEOUT)),
                role -> new KafkaProducer<>(
                        KafkaCoordinationTransport.transactionalSettings(connection, role, TIMEOUT, TIMEOUT)),
                new KafkaConsumer<>(KafkaCoordinationTransport.readerSettings(connection)),
                topic,
                TIMEOUT);
        return (CoordinationTransport) Proxy.newProxyInstance(
                CoordinationTransport.class.getClassLoader(),
                new Class<?>[] {CoordinationTransport.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("read")) {
                        reads.add(List.of(RolePartitioner.partitionFor((Role) args[0], PARTITIONS)));
                    } else if (method.getName().equals("readAll")) {
                        @SuppressWarnings("unchecked")
                        Map<Role, Long> from = (Map<Role, Long>) args[0];
                        reads.add(from.keySet().stream()
                                .map(r -> RolePartitioner.partitionFor(r, PARTITIONS))
                                .toList());
                    }
                    return invoke(kafka, method, args);
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
