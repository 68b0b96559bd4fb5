package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.LeaseConfig;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.actuate.CoordinationEndpoint;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import io.krabka.streams.coordination.test.memory.InMemoryCluster;
import io.krabka.streams.coordination.testing.ForwardingTransport;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.TopicSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /actuator/coordination} over HTTP, on members of an in-memory cluster: what any
 * client that can reach the port can make the member do.
 */
class CoordinationEndpointHttpTests {

    private static final Role CONTROLLER = Role.of("controller");
    private static final TopicSpec TOPIC = TopicSpec.DEFAULTS.withPartitions(3);
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Without waiting for the cluster: HTTP and JSON on a busy machine, and less than the 2 s the endpoint once waited. */
    private static final Duration ANSWERED_WITHIN = Duration.ofMillis(1_500);

    private final InMemoryCluster cluster = new InMemoryCluster();
    private final ClusterReads reads = new ClusterReads();
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {

        @Bean(destroyMethod = "close")
        CoordinationTransport coordinationTransport(
                InMemoryCluster coordinationTestCluster, ClusterReads clusterReads) {
            return clusterReads.around(coordinationTestCluster.transport(TOPIC));
        }
    }

    /**
     * Counts the reads of several roles' epochs at once: only the client's many-role
     * describe makes them (contenders ask about one role at a time), so each is one read of
     * the cluster by the endpoint. While {@link #away} is set they get no answer, as from
     * a cluster that is not there, until it is cleared (or 30 s pass).
     */
    static final class ClusterReads {
        final AtomicInteger started = new AtomicInteger();
        final AtomicReference<CountDownLatch> away = new AtomicReference<>();

        CoordinationTransport around(CoordinationTransport transport) {
            return new ForwardingTransport(transport) {
                @Override
                public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
                    started.incrementAndGet();
                    CountDownLatch gone = away.get();
                    if (gone != null) {
                        try {
                            gone.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return super.describeEpochs(roles);
                }
            };
        }

        void leave() {
            away.set(new CountDownLatch(1));
        }

        void comeBack() {
            away.getAndSet(null).countDown();
        }
    }

    @AfterEach
    void stop() {
        CountDownLatch gone = reads.away.get();
        if (gone != null) {
            gone.countDown();
        }
        for (int i = apps.size() - 1; i >= 0; i--) {
            apps.get(i).close();
        }
    }

    private ConfigurableApplicationContext start(String member, String... more) {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(MemberApp.class)
                .initializers(context -> {
                    context.getBeanFactory().registerSingleton("coordinationTestCluster", cluster);
                    context.getBeanFactory().registerSingleton("clusterReads", reads);
                })
                .properties(
                        "server.port=0",
                        "management.endpoints.web.exposure.include=coordination",
                        "krabka.coordination.member-id=" + member,
                        "krabka.coordination.roles=controller",
                        "krabka.coordination.endpoint.show-details=always")
                .properties(more)
                .run();
        apps.add(app);
        return app;
    }

    private static String base(ConfigurableApplicationContext app) {
        return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + "/actuator/coordination/";
    }

    private static MemberRoleState state(ConfigurableApplicationContext app) {
        return app.getBean(LeadershipLoop.class).state(CONTROLLER);
    }

    /** {@code GET /actuator/coordination/{role}}, or the whole report for "". */
    private CompletableFuture<HttpResponse<String>> getAsync(ConfigurableApplicationContext app, String role) {
        String uri = role.isEmpty() ? base(app).substring(0, base(app).length() - 1) : base(app) + role;
        return http.sendAsync(HttpRequest.newBuilder(URI.create(uri)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String role) {
        return getAsync(app, role).join();
    }

    private static JsonNode json(HttpResponse<String> response) {
        return JsonMapper.builder().build().readTree(response.body());
    }

    /** Fires every GET at once and waits for all answers. */
    private List<HttpResponse<String>> flood(ConfigurableApplicationContext app, List<String> names) {
        List<CompletableFuture<HttpResponse<String>>> sent =
                names.stream().map(name -> getAsync(app, name)).toList();
        return sent.stream().map(CompletableFuture::join).toList();
    }

    private static List<String> strangers(String prefix, int count) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            names.add(prefix + i);
        }
        return names;
    }

    /** The member's own role, once the cluster's view of it is read again: the holder, current, no problem. */
    private void assertOwnRoleAnswersInFull(ConfigurableApplicationContext app) {
        await().atMost(WAIT).untilAsserted(() -> {
            HttpResponse<String> own = get(app, "controller");
            assertThat(own.statusCode()).as(own.body()).isEqualTo(200);
            JsonNode report = json(own);
            assertThat(report.get("problem").isNull())
                    .as("problem in %s", report)
                    .isTrue();
            assertThat(report.get("holder").asString()).isEqualTo("n1");
            assertThat(report.get("current").asBoolean())
                    .as("current in %s", report)
                    .isTrue();
        });
    }

    /** The whole report, once it shows a read of the cluster that returned and none since that failed. */
    private JsonNode awaitClusterView(ConfigurableApplicationContext app) {
        AtomicReference<JsonNode> seen = new AtomicReference<>();
        await().atMost(WAIT).until(() -> {
            JsonNode report = json(get(app, ""));
            seen.set(report);
            JsonNode view = report.get("clusterView");
            return !view.get("asOf").isNull()
                    && view.get("problem").isNull()
                    && report.get("roles").get("controller").get("problem").isNull();
        });
        return seen.get();
    }

    private static Duration took(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /**
     * While the cluster does not answer the endpoint's reads, {@code GET /actuator/coordination}
     * still answers at once (it used to take its whole 2 s budget on every call): with the
     * last view of the cluster, its age, and from 2 s on the problem. One read is started,
     * however many requests come, and the view is whole again once the cluster answers.
     */
    @Test
    void theReportAnswersAtOnceWithTheLastViewAndItsAgeWhileTheClusterDoesNotAnswer() {
        ConfigurableApplicationContext n1 = start("n1", "krabka.coordination.endpoint.cluster-view-max-age=100ms");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        awaitClusterView(n1);
        reads.leave();
        Instant leftAt = Instant.now();
        int readsBefore = reads.started.get();
        long away = System.nanoTime();
        AtomicInteger answers = new AtomicInteger();
        AtomicReference<JsonNode> last = new AtomicReference<>();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
            long start = System.nanoTime();
            HttpResponse<String> response = get(n1, "");
            // At once every time, though no read returns: the old endpoint took its whole 2 s on each
            // (the bound leaves room for a busy 2-core machine, and is still below those 2 s).
            assertThat(took(start)).as("answered in").isLessThan(ANSWERED_WITHIN);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            answers.incrementAndGet();
            last.set(json(response));
            // Before the read's 2 s are up the view may already say it is old (100 ms + 2 s).
            JsonNode problem = last.get().path("clusterView").path("problem");
            return problem.isString() && problem.asString().contains("did not answer");
        });
        assertThat(answers.get())
                .as("answers within the 2 s before the problem shows")
                .isGreaterThan(1);
        JsonNode view = last.get().get("clusterView");
        assertThat(view.get("problem").asString()).isEqualTo("the cluster did not answer within 2 s");
        assertThat(view.get("refreshing").asBoolean()).isTrue();
        String asOf = view.get("asOf").asString();
        assertThat(Instant.parse(asOf))
                .as("the last view read before the cluster left")
                .isBeforeOrEqualTo(leftAt);
        assertThat(view.get("ageMillis").asLong())
                .isGreaterThanOrEqualTo(2_000)
                .isLessThanOrEqualTo(took(away).toMillis() + 1_000);
        JsonNode controller = last.get().get("roles").get("controller");
        assertThat(controller.get("state").asString()).isEqualTo("leader");
        assertThat(controller.get("holder").asString()).isEqualTo("n1");
        assertThat(controller.get("current").asBoolean())
                .as("unconfirmed without the cluster")
                .isFalse();
        assertThat(controller.get("problem").asString()).contains("did not answer within 2 s");
        assertThat(controller.get("asOf").asString()).isEqualTo(asOf);
        // However many requests came, one read of the cluster was started.
        assertThat(reads.started.get() - readsBefore).isEqualTo(1);

        reads.comeBack();
        JsonNode after = awaitClusterView(n1);
        assertThat(after.get("roles").get("controller").get("current").asBoolean())
                .isTrue();
        assertThat(Instant.parse(after.get("clusterView").get("asOf").asString()))
                .isAfter(Instant.parse(asOf));
    }

    /** A burst of GETs while a read is under way starts no other: each answers at once from the last view. */
    @Test
    void concurrentRequestsStartOneReadOfTheCluster() {
        ConfigurableApplicationContext n1 = start("n1", "krabka.coordination.endpoint.cluster-view-max-age=0s");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        awaitClusterView(n1);
        reads.leave();
        int readsBefore = reads.started.get();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            paths.add(i % 4 == 0 ? "controller" : "");
        }
        long start = System.nanoTime();
        List<HttpResponse<String>> answers = flood(n1, paths);
        Duration burst = took(start);
        assertThat(answers)
                .allSatisfy(answer ->
                        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200));
        assertThat(answers)
                .filteredOn(answer -> json(answer).has("clusterView"))
                .allSatisfy(answer -> assertThat(json(answer)
                                .get("clusterView")
                                .get("refreshing")
                                .asBoolean())
                        .isTrue());
        assertThat(reads.started.get() - readsBefore)
                .as("reads started by %s requests", paths.size())
                .isEqualTo(1);
        assertThat(burst).as("200 requests while the read hangs").isLessThan(Duration.ofSeconds(10));
        reads.comeBack();
        awaitClusterView(n1);
    }

    /**
     * A mistyped role is a 404 whose body is a problem detail, as POST refusals carry a
     * {@code detail}: it names the role asked for and the roles this member contends for.
     */
    @Test
    void anUnknownRoleIsA404ProblemDetailNamingTheRolesThisMemberKnows() {
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        HttpResponse<String> unknown = get(n1, "contrller");
        assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);
        assertThat(unknown.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
        JsonNode problem = json(unknown);
        assertThat(problem.get("status").asInt()).isEqualTo(404);
        assertThat(problem.get("title").asString()).isEqualTo("Not Found");
        assertThat(problem.get("detail").asString())
                .isEqualTo("unknown role \"contrller\": nobody has registered for it or"
                        + " held it on the coordination topic; this member contends for [controller]");
        assertThat(problem.get("role").asString()).isEqualTo("contrller");
        assertThat(problem.get("roles").size()).isEqualTo(1);
        assertThat(problem.get("roles").get(0).asString()).isEqualTo("controller");
        assertThat(problem.get("instance").asString()).isEqualTo("/actuator/coordination/contrller");

        HttpResponse<String> invalid = get(n1, "bad%E2%80%8Bname");
        assertThat(invalid.statusCode()).as(invalid.body()).isEqualTo(404);
        assertThat(json(invalid).get("detail").asString())
                .startsWith("unknown role \"bad\u200Bname\": it is not a role name: ")
                .endsWith("; this member contends for [controller]");
        // A known role answers as before.
        assertThat(get(n1, "controller").statusCode()).isEqualTo(200);
    }

    /**
     * While the cluster is slow, a burst of GETs for names nobody uses fills the endpoint's
     * queue and some are refused: once the burst is over, nothing of it is left behind,
     * and the member's own role (asked during the burst too) answers in full again.
     */
    @Test
    void aFloodOfNamesOnASlowClusterLeavesNothingBehind() {
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        List<String> names = strangers("slow-", 60);
        InMemoryCluster.Fault slow = cluster.latency(InMemoryCluster.Operation.DESCRIBE, Duration.ofSeconds(1));
        try {
            List<CompletableFuture<HttpResponse<String>>> burst =
                    names.stream().map(name -> getAsync(n1, name)).toList();
            // The first answer is a refusal: the queue is full, and stays so for a second.
            Object first = CompletableFuture.anyOf(burst.toArray(CompletableFuture[]::new))
                    .join();
            assertThat(((HttpResponse<?>) first).body().toString()).contains("ask again later");
            // The member's own roles are described apart: never refused for the others' sake.
            HttpResponse<String> ownDuringBurst = get(n1, "controller");
            assertThat(ownDuringBurst.statusCode()).isEqualTo(200);
            assertThat(ownDuringBurst.body()).doesNotContain("ask again later");
            burst.forEach(CompletableFuture::join);
        } finally {
            slow.close();
        }
        assertOwnRoleAnswersInFull(n1);
        assertNothingLeftBehind(n1, names);
    }

    /** The same on a healthy cluster: a few hundred GETs at once, then every answer is whole again. */
    @Test
    void aFloodOfNamesOnAHealthyClusterLeavesNothingBehind() {
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        List<String> names = new ArrayList<>(strangers("healthy-", 300));
        for (int i = 0; i < 300; i += 15) {
            names.add(i, "controller");
        }
        flood(n1, names);
        assertOwnRoleAnswersInFull(n1);
        assertNothingLeftBehind(n1, names);
    }

    /**
     * Once the describes the flood queued are done, none is kept, the cache is within its
     * bound, and the last name (refused during the flood, as a rule) is described again,
     * not refused from memory.
     */
    private void assertNothingLeftBehind(ConfigurableApplicationContext app, List<String> names) {
        CoordinationEndpoint endpoint = app.getBean(CoordinationEndpoint.class);
        await().atMost(WAIT).until(() -> endpoint.describesUnderway() == 0);
        assertThat(endpoint.cachedOtherRoles()).isLessThanOrEqualTo(CoordinationEndpoint.OTHER_ROLES_CACHED);
        HttpResponse<String> refused = get(app, names.get(names.size() - 1));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(404);
        assertThat(endpoint.describesUnderway()).isZero();
    }

    private HttpResponse<String> post(
            ConfigurableApplicationContext app, String path, String contentType, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base(app) + path))
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString())
                .join();
    }

    /**
     * A POST a page in the operator's browser could send to a member on 127.0.0.1 without
     * a CORS preflight (a "simple" request: no body, or a text, form or multipart body)
     * moves no role: release and handover take JSON only, which a cross-site page can send
     * only after a preflight that the actuator refuses unless CORS is configured for it.
     */
    @Test
    void rolesMoveOnlyOnAJsonPost() {
        ConfigurableApplicationContext n1 = start("n1", "krabka.coordination.endpoint.release-enabled=true");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        ConfigurableApplicationContext n2 = start("n2", "krabka.coordination.endpoint.release-enabled=true");
        await().atMost(WAIT)
                .until(() -> state(n2) == MemberRoleState.STANDBY
                        && json(get(n1, "controller")).get("roster").size() == 2);

        List<HttpResponse<String>> simple = List.of(
                post(n1, "controller", null, null),
                post(n1, "controller", "text/plain", "{}"),
                post(n1, "controller", "text/plain;charset=UTF-8", "{\"to\":\"n2\"}"),
                post(n1, "controller", "application/x-www-form-urlencoded", "to=n2"),
                post(
                        n1,
                        "controller",
                        "multipart/form-data; boundary=x",
                        "--x\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\nn2\r\n--x--\r\n"),
                post(n1, "controller/n2", null, null),
                post(n1, "controller/n2", "text/plain", ""));
        assertThat(simple)
                .allSatisfy(refused ->
                        assertThat(refused.statusCode()).as(refused.body()).isIn(404, 405, 415));
        assertThat(state(n1)).isEqualTo(MemberRoleState.LEADER);
        assertThat(state(n2)).isEqualTo(MemberRoleState.STANDBY);

        HttpResponse<String> handedOver = post(n1, "controller", "application/json", "{\"to\":\"n2\"}");
        assertThat(handedOver.statusCode()).as(handedOver.body()).isEqualTo(200);
        assertThat(json(handedOver).get("detail").asString()).isEqualTo("handed over to n2");
        await().atMost(WAIT).until(() -> state(n2) == MemberRoleState.LEADER);

        HttpResponse<String> notAStandby = post(n2, "controller", "application/json", "{\"to\":\"nobody\"}");
        assertThat(notAStandby.statusCode()).as(notAStandby.body()).isEqualTo(409);
        // No body at all, as curl -X POST -H 'Content-Type: application/json' sends: a release.
        HttpResponse<String> released = post(n2, "controller", "application/json", null);
        assertThat(released.statusCode()).as(released.body()).isEqualTo(200);
        assertThat(json(released).get("detail").asString()).isEqualTo("released");
        // {} is a release too: answered by the operation (200 or 409, whoever holds the role now), not refused.
        HttpResponse<String> empty = post(n2, "controller", "application/json", "{}");
        assertThat(empty.statusCode()).as(empty.body()).isIn(200, 409);
        assertThat(json(empty).get("role").asString()).isEqualTo("controller");
    }

    /**
     * A live holder asked about its role after an idle spell longer than its lease minus
     * its renew interval: the endpoint answers at once with the view of the last request,
     * whose deadline has passed by now, and reads again. The holder renewed meanwhile, so
     * it is current: a lease has run out only if it had when the view was read (an outside
     * review found the endpoint comparing with the clock now).
     */
    @Test
    void aLiveHolderAskedAfterAnIdleSpellIsStillCurrent() throws Exception {
        ConfigurableApplicationContext n1 =
                start("n1", "krabka.coordination.lease.duration=3s", "krabka.coordination.lease.renew-interval=1s");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        assertOwnRoleAnswersInFull(n1);
        Instant viewDeadline =
                Instant.parse(json(get(n1, "controller")).get("deadline").asString());
        // Nobody asks until the deadline of the view the endpoint keeps has passed.
        await().atMost(WAIT).until(() -> Instant.now().isAfter(viewDeadline.plusMillis(500)));

        JsonNode report = json(get(n1, "controller"));

        assertThat(state(n1)).isEqualTo(MemberRoleState.LEADER);
        assertThat(report.get("problem").isNull()).as("problem in %s", report).isTrue();
        assertThat(report.get("current").asBoolean())
                .as("the live holder n1 (state leader) in %s", report)
                .isTrue();
    }

    /**
     * A holder whose lease ran out with nobody to challenge it: it stopped without
     * releasing (as holders do when a broker outage lets every lease run out), and the
     * member asked does not contend for the role. The coordinator still reports the
     * holder's epoch, so the core's status is current; the report is not, since the
     * deadline has passed. It used to say {@code current: true} with a deadline in the
     * past until a standby challenged.
     */
    @Test
    void aLeaseThatRanOutIsNotCurrentThoughNobodyChallengedIt() throws Exception {
        ConfigurableApplicationContext n1 = start("n1", "krabka.coordination.roles=scheduler");
        try (CoordinationTransport transport = cluster.transport(TOPIC);
                CoordinationClient holder = new CoordinationClient(
                        transport,
                        LeaseConfig.DEFAULTS
                                .withDuration(Duration.ofSeconds(3))
                                .withRenewInterval(Duration.ofSeconds(1)),
                        InstantSource.system())) {
            Leadership held = await().atMost(WAIT)
                    .until(() -> holder.tryAcquire(CONTROLLER, MemberId.of("n0")), Optional::isPresent)
                    .orElseThrow();
            await().atMost(WAIT).until(() -> holder.describe(CONTROLLER).current());
            held.abandon();

            await().atMost(WAIT).untilAsserted(() -> {
                JsonNode report = json(get(n1, "controller"));
                assertThat(report.get("holder").asString())
                        .as("holder in %s", report)
                        .isEqualTo("n0");
                assertThat(report.get("state").asString()).isEqualTo("not-configured");
                assertThat(Instant.parse(report.get("asOf").asString()))
                        .as("read after the deadline in %s", report)
                        .isAfter(Instant.parse(report.get("deadline").asString()));
                assertThat(report.get("leaseToken"))
                        .as("nobody challenged: the coordinator still has the lease's epoch, in %s", report)
                        .isEqualTo(report.get("token"));
                assertThat(report.get("current").asBoolean())
                        .as("current in %s", report)
                        .isFalse();
            });
            assertThat(holder.describe(CONTROLLER).current())
                    .as("the core's epoch-based status: nobody challenged")
                    .isTrue();
        }
    }

    /**
     * Lease records with extreme times (anyone who may write to the topic can write one):
     * the endpoint shows each such role as it is, and its own role is unaffected.
     */
    @Test
    void extremeLeaseTimesShowOnTheEndpoint() {
        ConfigurableApplicationContext n1 = start("n1");
        await().atMost(WAIT).until(() -> state(n1) == MemberRoleState.LEADER);
        long[][] extremes = {
            {0, Long.MIN_VALUE}, {0, Long.MAX_VALUE}, {Long.MIN_VALUE, Long.MIN_VALUE}, {Long.MAX_VALUE, Long.MAX_VALUE}
        };
        for (int i = 0; i < extremes.length; i++) {
            Role role = Role.of("extreme-" + i);
            CoordinationRecord.Lease lease =
                    new CoordinationRecord.Lease(MemberId.of("forger"), 7, (short) 0, extremes[i][0], extremes[i][1]);
            cluster.produce(new ProducerRecord<>(
                    TOPIC.name(),
                    RolePartitioner.partitionFor(role, TOPIC.partitions()),
                    CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                    CoordinationCodec.encodeValue(lease)));
        }
        for (int i = 0; i < extremes.length; i++) {
            HttpResponse<String> answer = get(n1, "extreme-" + i);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            JsonNode report = json(answer);
            assertThat(report.get("holder").asString()).isEqualTo("forger");
            assertThat(report.get("problem").isNull()).as(answer.body()).isTrue();
            assertThat(Instant.parse(report.get("deadline").asString()))
                    .isEqualTo(Instant.ofEpochMilli(extremes[i][1]));
            assertThat(Instant.parse(report.get("grantedAt").asString()))
                    .isEqualTo(Instant.ofEpochMilli(extremes[i][0]));
        }
        assertOwnRoleAnswersInFull(n1);
    }
}
