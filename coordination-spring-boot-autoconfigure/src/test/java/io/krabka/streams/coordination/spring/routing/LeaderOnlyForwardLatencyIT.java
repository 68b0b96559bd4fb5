package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The latency a forward adds to a {@code @LeaderOnly} request, measured in one run: two
 * starter members in this JVM on one in-process broker; the same POST, alternately straight
 * to the holder and through the other member, one at a time on one keep-alive client. The
 * handler writes nothing, so the difference is the hop: the non-holder's routing decision
 * (its view of the holder, at most view-max-age old) and the proxied exchange. It prints
 * p50, p90, p99 and max of both (docs/PERFORMANCE.md, "Routing"), and checks that every
 * forwarded answer is the holder's, with its headers. A measurement, so with {@code -Plong}:
 * {@code ./mvnw -B -Plong -pl coordination-spring-boot-autoconfigure -am verify
 * -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=LeaderOnlyForwardLatencyIT
 * -Dfailsafe.failIfNoSpecifiedTests=false}
 */
@Tag("long")
class LeaderOnlyForwardLatencyIT {

    private static final int WARMUP = 500;
    private static final int SAMPLES = 2000;

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Commands.class)
    static class Member {}

    @RestController
    static class Commands {

        @LeaderOnly(role = "controller")
        @PostMapping("/command")
        String command() {
            return "done";
        }
    }

    @Test
    void aForwardedRequestGetsTheHoldersAnswerAndItsAddedLatencyIsMeasured() throws Exception {
        List<ConfigurableApplicationContext> members = new ArrayList<>();
        try (KafkaTestCluster cluster = KafkaTestCluster.start()) {
            try {
                for (String id : List.of("n1", "n2")) {
                    members.add(member(cluster, id));
                }
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> members.stream().anyMatch(LeaderOnlyForwardLatencyIT::holds));
                ConfigurableApplicationContext holder = members.stream()
                        .filter(LeaderOnlyForwardLatencyIT::holds)
                        .findFirst()
                        .orElseThrow();
                ConfigurableApplicationContext other = members.get(0) == holder ? members.get(1) : members.get(0);
                String holderId = holder.getBean(LeadershipLoop.class).member().value();
                HttpClient http = HttpClient.newHttpClient();
                List<Long> direct = new ArrayList<>();
                List<Long> forwarded = new ArrayList<>();
                for (int i = 0; i < WARMUP + SAMPLES; i++) {
                    long d = post(http, uri(holder), holderId);
                    long f = post(http, uri(other), holderId);
                    if (i >= WARMUP) {
                        direct.add(d);
                        forwarded.add(f);
                    }
                }
                Collections.sort(direct);
                Collections.sort(forwarded);
                System.out.println("| path | n | p50 ms | p90 ms | p99 ms | max ms |");
                System.out.println("|---|---|---|---|---|---|");
                row("direct to the holder", direct);
                row("through a non-holder (forward)", forwarded);
                System.out.printf(
                        Locale.ROOT,
                        "added by the forward: p50 %+.2f ms, p99 %+.2f ms%n",
                        ms(pct(forwarded, 50) - pct(direct, 50)),
                        ms(pct(forwarded, 99) - pct(direct, 99)));
                assertThat(direct).hasSize(SAMPLES);
                assertThat(forwarded).hasSize(SAMPLES);
            } finally {
                members.forEach(ConfigurableApplicationContext::close);
            }
        }
    }

    private static boolean holds(ConfigurableApplicationContext member) {
        return member.getBean(LeadershipLoop.class).state(Role.of("controller")) == MemberRoleState.LEADER;
    }

    private static ConfigurableApplicationContext member(KafkaTestCluster cluster, String id) {
        Map<String, Object> properties = new HashMap<>();
        properties.put("spring.kafka.bootstrap-servers", cluster.bootstrapServers());
        properties.put("server.port", "0");
        properties.put("krabka.coordination.member-id", id);
        properties.put("krabka.coordination.roles", "controller");
        properties.put("krabka.coordination.advertised-url", "http://127.0.0.1:${local.server.port}");
        properties.put("krabka.coordination.topic.replication-factor", "1");
        properties.put("krabka.coordination.topic.allow-unsafe", "true");
        properties.put("krabka.coordination.topic.partitions", "3");
        properties.put("logging.level.root", "warn");
        return new SpringApplicationBuilder(Member.class).properties(properties).run();
    }

    private static URI uri(ConfigurableApplicationContext member) {
        return URI.create("http://127.0.0.1:" + member.getEnvironment().getProperty("local.server.port") + "/command");
    }

    /** One POST; its answer must be the holder's. */
    private static long post(HttpClient http, URI uri, String holder) throws Exception {
        long began = System.nanoTime();
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(uri)
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        long took = System.nanoTime() - began;
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).isEqualTo("done");
        assertThat(answer.headers().firstValue(RoutingHeaders.HOLDER)).contains(holder);
        return took;
    }

    private static long pct(List<Long> sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }

    private static void row(String path, List<Long> sorted) {
        System.out.printf(
                Locale.ROOT,
                "| %s | %d | %.2f | %.2f | %.2f | %.2f |%n",
                path,
                sorted.size(),
                ms(pct(sorted, 50)),
                ms(pct(sorted, 90)),
                ms(pct(sorted, 99)),
                ms(sorted.get(sorted.size() - 1)));
    }

    private static double ms(long nanos) {
        return nanos / 1_000_000.0;
    }
}
