package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The sample as Spring AOT prepared it: the jar built with {@code -Paot} (process-aot),
 * run with {@code -Dspring.aot.enabled=true} on its embedded broker, takes the role
 * {@code controller}, its {@code @OnLeadership} dispatcher writes, and
 * {@code /actuator/coordination} answers. Only with {@code -Paot} (docs/TESTING.md).
 */
class AotSampleIT {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void theAotPreparedSampleTakesItsRoleAndAnswersTheEndpoint() throws Exception {
        // The starter's hints reached the native-image metadata: its role work and pipeline methods.
        Path metadata = Path.of(
                System.getProperty("sample.target", "target"),
                "spring-aot",
                "main",
                "resources",
                "META-INF",
                "native-image",
                "io.krabka",
                "krabka-coordination-sample-app",
                "reachability-metadata.json");
        JsonNode reflection = JsonMapper.builder()
                .build()
                .readTree(Files.readString(metadata))
                .path("reflection");
        assertThat(invocable(reflection, CommandDispatcher.class.getName())).contains("dispatch");
        assertThat(invocable(reflection, RequestHandler.class.getName())).contains("onRequest");

        Path jar = Path.of(System.getProperty("sample.jar", "target/missing.jar"));
        assertThat(jar)
                .as("the packaged sample app (run with -Paot, after package)")
                .isRegularFile();
        Path log = Path.of(System.getProperty("sample.target", "target")).resolve("aot-sample.log");
        int port = freePort();
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Dspring.aot.enabled=true",
                        "-XX:TieredStopAtLevel=1",
                        "-Xmx512m",
                        "-jar",
                        jar.toString(),
                        "--server.port=" + port,
                        "--sample.broker.port=" + freePort(),
                        "--krabka.coordination.member-id=aot"))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            await("the AOT-prepared member leads")
                    .atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .until(() -> {
                        JsonNode role = get(port, "/actuator/coordination")
                                .path("roles")
                                .path("controller");
                        return "leader".equals(role.path("state").asString())
                                && "aot".equals(role.path("holder").asString());
                    });
            String output = Files.readString(log);
            // Proof that the AOT initializer ran, not the reflective configuration.
            assertThat(output).contains("Starting AOT-processed");
            await("its dispatcher's guarded commands reach the device")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .until(() ->
                            get(port, "/device").path("accepted").path("aot").asLong() >= 3);
        } finally {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    private static List<String> invocable(JsonNode reflection, String type) {
        List<String> methods = new java.util.ArrayList<>();
        reflection.forEach(entry -> {
            if (entry.path("type").isString() && type.equals(entry.path("type").asString())) {
                entry.path("methods")
                        .forEach(method -> methods.add(method.path("name").asString()));
            }
        });
        return methods;
    }

    private JsonNode get(int port, String path) throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET %s", path).isEqualTo(200);
        return JsonMapper.builder().build().readTree(response.body());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            return socket.getLocalPort();
        }
    }
}
