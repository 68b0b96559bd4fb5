package io.krabka.coordination.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Without {@code spring.kafka.bootstrap-servers} the application runs its own broker on
 * the configured port, works on it, and stops it when it closes.
 */
class EmbeddedBrokerIT {

    @Test
    void startsItsOwnBrokerWhenNoClusterIsGivenAndStopsItOnClose() throws IOException {
        int brokerPort = freePort();
        ConfigurableApplicationContext app = SampleControlPlaneApplication.application()
                .run("--server.port=0", "--sample.broker.port=" + brokerPort, "--krabka.coordination.member-id=solo");
        try {
            assertThat(app.getEnvironment().getProperty("spring.kafka.bootstrap-servers"))
                    .isEqualTo("127.0.0.1:" + brokerPort);
            LeadershipLoop loop = app.getBean(LeadershipLoop.class);
            SimulatedDevice device = app.getBean(SimulatedDevice.class);
            await("the member leads and its device accepts its commands")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> device.report().accepted().getOrDefault("solo", 0L) >= 3);
            assertThat(loop.state(Role.of("controller"))).isEqualTo(MemberRoleState.LEADER);
            assertThat(device.report().rejected()).isEmpty();
            assertThat(device.report().highestTerm())
                    .isEqualTo(
                            loop.leadership(Role.of("controller")).orElseThrow().term());
        } finally {
            app.close();
        }
        // Closed with the application: its port can be bound again.
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), brokerPort));
            assertThat(socket.isBound()).isTrue();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            return socket.getLocalPort();
        }
    }
}
