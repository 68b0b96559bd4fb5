package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Balance;
import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.runtime.CoordinationRuntime;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 42, item 3, on a real broker: three members started together under
 * {@code balance=spread} take one role each, once. Before the cold-start rule the first
 * member to register took all three and handed two away a settle later (two grants and a
 * RELEASED end for each moved role, seen by the role's work and its devices).
 */
class ColdStartSpreadIT {

    // A stagger of 3 s: time enough for three members of one JVM to register on a busy machine.
    private static final LeaseConfig CONFIG =
            new LeaseConfig(Duration.ofSeconds(6), Duration.ofSeconds(2), Duration.ofSeconds(3));
    /** Roles and topic named for this run: the cluster is shared with other test classes. */
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);

    private static final List<Role> ROLES =
            List.of(Role.of("rollout-eu-" + RUN), Role.of("rollout-us-" + RUN), Role.of("rollout-ap-" + RUN));
    private static final List<String> MEMBERS = List.of("cp-1", "cp-2", "cp-3");

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final List<String> grants = new CopyOnWriteArrayList<>();
    private final List<String> ends = new CopyOnWriteArrayList<>();
    private final List<Contender> contenders = new ArrayList<>();
    private final List<CoordinationClient> clients = new ArrayList<>();
    private final KafkaTestCluster cluster = KafkaTestCluster.shared();

    @AfterEach
    void close() throws Exception {
        contenders.forEach(Contender::stop);
        contenders.forEach(contender -> contender.awaitStopped(Duration.ofSeconds(30)));
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    @Test
    void threeMembersStartedTogetherTakeOneRoleEachWithNoHandover() {
        TopicSpec topic = TopicSpec.DEFAULTS
                .withName("cold-start-" + RUN)
                .withReplicationFactor(1)
                .withPartitions(3);
        // The topic exists before the members start, as it does for every start but the very first.
        KafkaCoordinationTransport creator = cluster.transport(topic);
        closing.add(creator);
        // And so does the transaction log, which the first InitProducerId of a cluster creates (50 partitions).
        CoordinationClient creating = new CoordinationClient(creator, CONFIG, CoordinationRuntime.shared());
        creating.tryAcquire(Role.of("warm-up-" + RUN), MemberId.of("warm-up"))
                .orElseThrow()
                .close();

        for (String id : MEMBERS) {
            KafkaCoordinationTransport transport = cluster.transport(topic);
            closing.add(transport);
            CoordinationClient client =
                    new CoordinationClient(transport, CONFIG, CoordinationRuntime.shared()).balance(Balance.SPREAD);
            clients.add(client);
            for (Role role : ROLES) {
                contenders.add(new Contender(client, role, MemberId.of(id), new Contender.Listener() {
                    @Override
                    public void granted(Leadership leadership) {
                        grants.add(id + " " + role);
                    }

                    @Override
                    public void ended(Leadership leadership, LeadershipEndCause cause, Throwable failure) {
                        ends.add(id + " " + role + " " + cause);
                    }
                }));
            }
        }
        contenders.forEach(Contender::start);

        await().atMost(Duration.ofSeconds(60))
                .until(() ->
                        held().values().stream().mapToInt(Integer::intValue).sum() == 3);
        assertThat(held())
                .as("grants %s", grants)
                .containsOnly(Map.entry("cp-1", 1), Map.entry("cp-2", 1), Map.entry("cp-3", 1));
        // Through the balancer's settle (two renew intervals) and a lease more: no grant and no end.
        Duration settled = CONFIG.renewInterval().multipliedBy(2).plus(CONFIG.duration());
        await().during(settled).atMost(settled.plusSeconds(30)).until(() -> grants.size() == 3 && ends.isEmpty());
        assertThat(held()).containsOnly(Map.entry("cp-1", 1), Map.entry("cp-2", 1), Map.entry("cp-3", 1));
        assertThat(grants).as("each role granted once").hasSize(3);
        assertThat(ends).as("no leadership ended").isEmpty();
        assertThat(clients)
                .allSatisfy(client -> assertThat(client.share(MemberId.of(MEMBERS.get(clients.indexOf(client))))
                                .movesOut())
                        .isZero());
    }

    /** Per member, how many roles it holds now. */
    private Map<String, Integer> held() {
        Map<String, Integer> held = new TreeMap<>();
        for (Contender contender : contenders) {
            held.merge(
                    contender.member().value(),
                    contender.leadership().filter(Leadership::isActive).isPresent() ? 1 : 0,
                    Integer::sum);
        }
        return held;
    }
}
