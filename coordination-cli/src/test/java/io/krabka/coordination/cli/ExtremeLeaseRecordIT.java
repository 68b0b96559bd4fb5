package io.krabka.coordination.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.krabka.coordination.cli.CoordinationCliTest.Result;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.kafka.KafkaCoordinationTransport;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Well-formed lease records with extreme times (a deadline or grant time of
 * {@code Long.MIN_VALUE} or {@code Long.MAX_VALUE} milliseconds), written by anyone who
 * may write to the topic, next to a role a member really holds: every command still
 * shows every role, in both formats.
 */
class ExtremeLeaseRecordIT {

    private static final Role HELD = Role.of("held");
    private static final TopicSpec TOPIC =
            TopicSpec.DEFAULTS.withReplicationFactor(1).withPartitions(3);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Role name to (grantedAt, deadline). */
    private static final Map<String, long[]> EXTREMES = new LinkedHashMap<>();

    static {
        EXTREMES.put("deadline-min", new long[] {0, Long.MIN_VALUE});
        EXTREMES.put("deadline-max", new long[] {0, Long.MAX_VALUE});
        EXTREMES.put("granted-min", new long[] {Long.MIN_VALUE, System.currentTimeMillis()});
        EXTREMES.put("granted-max", new long[] {Long.MAX_VALUE, Long.MAX_VALUE});
        EXTREMES.put("both-min", new long[] {Long.MIN_VALUE, Long.MIN_VALUE});
    }

    private static KafkaTestCluster cluster;
    private static KafkaCoordinationTransport transport;
    private static CoordinationClient member;
    private static Leadership held;

    @BeforeAll
    static void writeRecords() throws Exception {
        cluster = KafkaTestCluster.start();
        transport = cluster.transport(TOPIC);
        member = new CoordinationClient(transport);
        held = member.tryAcquire(HELD, MemberId.of("n0")).orElseThrow();
        Map<String, Object> settings = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings)) {
            for (Map.Entry<String, long[]> extreme : EXTREMES.entrySet()) {
                Role role = Role.of(extreme.getKey());
                CoordinationRecord.Lease lease = new CoordinationRecord.Lease(
                        MemberId.of("forger"), 7, (short) 0, extreme.getValue()[0], extreme.getValue()[1]);
                producer.send(new ProducerRecord<>(
                                TOPIC.name(),
                                RolePartitioner.partitionFor(role, 3),
                                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                                CoordinationCodec.encodeValue(lease)))
                        .get(30, TimeUnit.SECONDS);
            }
        }
    }

    @AfterAll
    static void stop() {
        if (held != null) {
            held.close();
        }
        if (member != null) {
            member.close();
        }
        if (transport != null) {
            transport.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String[] args(String... command) {
        List<String> args = new ArrayList<>(List.of(command));
        args.addAll(List.of("--bootstrap-server", cluster.bootstrapServers(), "--partitions", "3", "--timeout", "20s"));
        return args.toArray(String[]::new);
    }

    private static String line(String out, String start) {
        return out.lines()
                .filter(line -> line.startsWith(start))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line starts with \"" + start + "\" in:\n" + out));
    }

    @Test
    void listShowsEveryRoleAsText() {
        Result result = CoordinationCliTest.cli(args("list"));

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err()).doesNotContain("unexpected failure");
        assertThat(line(result.out(), "held ")).contains(" n0 ");
        for (String role : EXTREMES.keySet()) {
            assertThat(line(result.out(), role + " ")).contains(" forger ");
        }
        assertThat(line(result.out(), "deadline-min ")).contains("passed ");
        assertThat(line(result.out(), "deadline-max ")).contains("(in ");
        assertThat(result.out()).contains("6 roles in topic");
    }

    @Test
    void listShowsEveryRoleAsJson() throws Exception {
        Result result = CoordinationCliTest.cli(args("list", "--output", "json"));

        assertThat(result.exitCode()).as(result.err()).isZero();
        JsonNode roles = JSON.readTree(result.out()).get("roles");
        assertThat(roles).hasSize(6);
        Map<String, JsonNode> byName = new LinkedHashMap<>();
        roles.forEach(role -> byName.put(role.get("role").asText(), role));
        assertThat(byName.get("held").get("holder").asText()).isEqualTo("n0");
        assertThat(byName.get("held").get("deadlineInMs").asLong()).isPositive();
        for (String role : EXTREMES.keySet()) {
            assertThat(byName.get(role).get("holder").asText()).as(role).isEqualTo("forger");
        }
        // Saturated, not wrapped around.
        assertThat(byName.get("deadline-min").get("deadlineInMs").asLong()).isEqualTo(Long.MIN_VALUE);
        assertThat(byName.get("deadline-max").get("deadlineInMs").asLong()).isGreaterThan(Long.MAX_VALUE / 2);
    }

    @Test
    void describeShowsEachExtremeRoleInBothFormats() throws Exception {
        for (String role : EXTREMES.keySet()) {
            Result text = CoordinationCliTest.cli(args("describe", "--role", role));
            assertThat(text.exitCode()).as(role + ": " + text.err()).isZero();
            assertThat(line(text.out(), "Holder:")).endsWith(" forger");
            assertThat(line(text.out(), "Deadline:")).matches("Deadline: +\\S+ \\((in|passed) .*");

            Result json = CoordinationCliTest.cli(args("describe", "--role", role, "--output", "json"));
            assertThat(json.exitCode()).as(role + ": " + json.err()).isZero();
            JsonNode described = JSON.readTree(json.out()).get("roles").get(0);
            assertThat(described.get("holder").asText()).isEqualTo("forger");
            assertThat(described.get("deadline").isTextual()).isTrue();
            assertThat(described.get("grantedAt").isTextual()).isTrue();
        }
    }
}
