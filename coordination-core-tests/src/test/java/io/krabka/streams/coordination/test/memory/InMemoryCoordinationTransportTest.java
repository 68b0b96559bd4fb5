package io.krabka.streams.coordination.test.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.test.transport.CoordinationTransportContract;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class InMemoryCoordinationTransportTest extends CoordinationTransportContract {

    private final InMemoryCluster cluster = new InMemoryCluster();

    @Override
    protected CoordinationTransport newTransport() {
        return cluster.transport(TopicSpec.DEFAULTS.withPartitions(3));
    }

    @Override
    protected void setTransactionVersion(short version) {
        cluster.setTransactionVersion(version);
    }

    @Test
    void vouchesForItsWatchersFromWhereTheyRegisteredUnlessTold() throws Exception {
        Role role = Role.of("vouched");
        InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(3));
        long before = transport.register(role, MemberId.of("a"), 1L) + 1;
        AutoCloseable watch = transport.watch(role, news -> {});
        try {
            assertThat(transport.tellsEverythingSince(role, before))
                    .as("a read up to the end when the watch began")
                    .isTrue();
            assertThat(transport.tellsEverythingSince(role, before - 1))
                    .as("a record before the watch began")
                    .isFalse();
            assertThat(transport.tellsEverythingSince(Role.of("unwatched"), 0)).isFalse();
            cluster.delayVisibility(Duration.ofMillis(10));
            assertThat(transport.tellsEverythingSince(role, before))
                    .as("watchers hear before readers see")
                    .isFalse();
            cluster.delayVisibility(Duration.ZERO);
            assertThat(transport.tellsEverythingSince(role, before)).isTrue();
            cluster.vouchForWatchers(false);
            assertThat(transport.tellsEverythingSince(role, before))
                    .as("when the cluster is told not to")
                    .isFalse();
        } finally {
            watch.close();
        }
        assertThat(transport.tellsEverythingSince(role, before))
                .as("once the watch is closed")
                .isFalse();
    }

    @Test
    void stalledWatchersHearNothingAndVouchForNothingUntilTheStallEndsThenHearItAllInOrder() throws Exception {
        Role role = Role.of("stalled");
        InMemoryCoordinationTransport transport = cluster.transport(TopicSpec.DEFAULTS.withPartitions(3));
        long before = transport.register(role, MemberId.of("a"), 1L) + 1;
        List<MemberId> heard = new ArrayList<>();
        AutoCloseable watch = transport.watch(role, news -> heard.add(news.member()));
        try {
            InMemoryCluster.Fault stall = cluster.stallWatchers();
            long during = transport.register(role, MemberId.of("b"), 2L) + 1;
            transport.register(role, MemberId.of("c"), 3L);
            assertThat(heard).as("news while stalled").isEmpty();
            assertThat(transport.tellsEverythingSince(role, before))
                    .as("vouched while stalled")
                    .isFalse();

            stall.close();
            assertThat(heard)
                    .as("held news, told when the stall ends")
                    .containsExactly(MemberId.of("b"), MemberId.of("c"));
            assertThat(transport.tellsEverythingSince(role, during))
                    .as("a read that stopped during the stall")
                    .isFalse();
            long after = transport.register(role, MemberId.of("d"), 4L) + 1;
            assertThat(heard).last().isEqualTo(MemberId.of("d"));
            assertThat(transport.tellsEverythingSince(role, after))
                    .as("a read after the stall")
                    .isTrue();
        } finally {
            watch.close();
        }
    }
}
