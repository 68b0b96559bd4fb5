package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationClient;
import io.krabka.streams.coordination.client.LeadershipStatus;
import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.EventListener;

/**
 * The starter against a broker whose only client listener is TLS (a self-signed
 * certificate made with the JDK's keytool). The application sets nothing but
 * {@code spring.kafka.bootstrap-servers}, {@code spring.kafka.security.protocol} and
 * {@code spring.kafka.ssl.trust-store-*}: the coordination topic is created (admin), the
 * role is won (registrar, role producer, reader) and described (admin, reader), so those
 * settings reach every client the starter builds. Without the trust store the same
 * application gets nowhere and says why.
 */
@ExtendWith(OutputCaptureExtension.class)
class TlsSettingsIT {

    private static final Role CONTROLLER = Role.of("controller");
    private static final String PASSWORD = "tls-secret";
    /** The client.id of every client the starter builds (KafkaCoordinationTransport.create). */
    private static final List<String> CLIENTS = List.of(
            "krabka-coordination-admin",
            "krabka-coordination-registrar",
            "krabka-coordination-reader",
            "krabka-coordination-watcher",
            "krabka-coordination-role-controller");

    @TempDir
    static Path dir;

    private static Path trustStore;
    private static KafkaProcessCluster cluster;

    /** Every Kafka client logs its effective settings, client.id included, at INFO on AbstractConfig. */
    @RegisterExtension
    final SpringMembers members = SpringMembers.of(MemberApp.class, () -> cluster.bootstrapServers("CLIENT"))
            .with(
                    "spring.main.web-application-type=none",
                    "spring.kafka.security.protocol=SSL",
                    "krabka.coordination.roles=" + CONTROLLER.name(),
                    "krabka.coordination.operation-timeout=10s",
                    "logging.level.org.apache.kafka.common.config.AbstractConfig=info");

    @BeforeAll
    static void startCluster() throws Exception {
        Path keyStore = dir.resolve("broker.p12");
        Path certificate = dir.resolve("broker.crt");
        trustStore = dir.resolve("trust.p12");
        keytool(
                "-genkeypair",
                "-alias",
                "broker",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-validity",
                "2",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=IP:127.0.0.1,DNS:localhost",
                "-keystore",
                keyStore.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                PASSWORD,
                "-keypass",
                PASSWORD);
        keytool(
                "-exportcert",
                "-rfc",
                "-alias",
                "broker",
                "-keystore",
                keyStore.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                PASSWORD,
                "-file",
                certificate.toString());
        keytool(
                "-importcert",
                "-noprompt",
                "-alias",
                "broker",
                "-file",
                certificate.toString(),
                "-keystore",
                trustStore.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                PASSWORD);
        cluster = KafkaProcessCluster.builder(dir.resolve("cluster"))
                .nodes(1)
                .listener(new KafkaProcessCluster.Listener("CLIENT", "SSL"))
                .setting("listener.name.client.ssl.keystore.location", keyStore.toString())
                .setting("listener.name.client.ssl.keystore.type", "PKCS12")
                .setting("listener.name.client.ssl.keystore.password", PASSWORD)
                .setting("listener.name.client.ssl.key.password", PASSWORD)
                .start();
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        command.addAll(List.of(args));
        Path log = dir.resolve("keytool.out");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IllegalStateException("keytool " + args[0] + " failed: " + Files.readString(log));
        }
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class MemberApp {

        final List<LeadershipGrantedEvent> grants = new CopyOnWriteArrayList<>();

        @EventListener
        void granted(LeadershipGrantedEvent event) {
            grants.add(event);
        }
    }

    /** Member n1, with or without the trust store that the broker's certificate needs. */
    private ConfigurableApplicationContext start(boolean trustStoreSettings) {
        return trustStoreSettings
                ? members.start(
                        "n1",
                        "spring.kafka.ssl.trust-store-location=" + trustStore.toUri(),
                        "spring.kafka.ssl.trust-store-password=" + PASSWORD,
                        "spring.kafka.ssl.trust-store-type=PKCS12")
                : members.start("n1");
    }

    private static boolean topicExists(String topic) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(topic);
        }
    }

    @Test
    void theTrustStoreSettingsReachTheAdminTheProducersAndTheReader(CapturedOutput output) throws Exception {
        String topic = members.topic();
        ConfigurableApplicationContext n1 = start(true);
        MemberApp app = n1.getBean(MemberApp.class);

        await().atMost(Duration.ofSeconds(30)).until(() -> !app.grants.isEmpty());
        assertThat(n1.getBean(LeadershipLoop.class).state(CONTROLLER)).isEqualTo(MemberRoleState.LEADER);
        assertThat(topicExists(topic))
                .as("the starter's admin created %s over TLS", topic)
                .isTrue();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            LeadershipStatus status = n1.getBean(CoordinationClient.class).describe(CONTROLLER);
            assertThat(status.holder()).contains(MemberId.of("n1"));
            assertThat(status.current()).isTrue();
        });

        // Each client the starter built was handed the protocol and the trust store. The
        // watcher builds its consumer on its own thread; a describe that finds the reader
        // busy (a slow machine) builds a numbered describe reader, which must have them too;
        // so must the fencing probe's clients, which run before the member contends.
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(clientSettings(output)).containsKeys(CLIENTS.toArray(String[]::new)));
        Map<String, String> settings = clientSettings(output);
        assertThat(settings.keySet())
                .allMatch(
                        client -> CLIENTS.contains(client)
                                || client.matches("krabka-coordination-reader-\\d+")
                                || client.matches("krabka-coordination-probe-(admin|a|b|reader|cleanup)"),
                        "a client the starter builds");
        assertThat(settings).containsKeys("krabka-coordination-probe-admin", "krabka-coordination-probe-a");
        settings.forEach((client, dump) -> assertThat(dump)
                .as(client)
                .contains("security.protocol = SSL")
                .contains("ssl.truststore.location = " + trustStore)
                .contains("ssl.truststore.type = PKCS12"));
    }

    @Test
    void withoutTheTrustStoreTheSameAppCreatesNothingAndSaysOnceThatTheHandshakeFailed(CapturedOutput output)
            throws Exception {
        String topic = members.topic();
        ConfigurableApplicationContext n1 = start(false);
        MemberApp app = n1.getBean(MemberApp.class);

        await().atMost(Duration.ofSeconds(30))
                .until(() -> output.getOut()
                        .lines()
                        .anyMatch(line -> line.contains(
                                        "could not authenticate to the cluster while contending for role controller")
                                && line.contains("SSL handshake failed")));
        // Said once, as an ERROR, not once per attempt: the next attempt is 10 s away.
        await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(5))
                .until(() -> output.getOut()
                                .lines()
                                .filter(line -> line.contains("could not authenticate to the cluster"))
                                .count()
                        == 1);
        assertThat(app.grants).isEmpty();
        assertThat(n1.getBean(LeadershipLoop.class).state(CONTROLLER)).isEqualTo(MemberRoleState.STANDBY);
        assertThat(topicExists(topic)).isFalse();
    }

    /** The settings each of the starter's clients logged when it was built, by client.id. */
    private static Map<String, String> clientSettings(CapturedOutput output) {
        Map<String, String> byClient = new LinkedHashMap<>();
        List<String> lines = output.getOut().lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).contains("Config values:")) {
                continue;
            }
            StringBuilder dump = new StringBuilder();
            for (int j = i + 1; j < lines.size() && lines.get(j).startsWith("\t"); j++) {
                dump.append(lines.get(j).trim()).append('\n');
            }
            String settings = dump.toString();
            settings.lines()
                    .filter(line -> line.startsWith("client.id = krabka-coordination-"))
                    .map(line -> line.substring("client.id = ".length()))
                    .forEach(client -> byClient.put(client, settings));
        }
        return byClient;
    }
}
