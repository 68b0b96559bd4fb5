package io.krabka.coordination.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A control plane that dispatches commands to a simulated device only while it holds
 * the role {@code controller}, through guarded writes that the broker fences once
 * another member took the role. Without {@code spring.kafka.bootstrap-servers} it runs
 * its own single-node broker on 127.0.0.1:9092.
 */
@SpringBootApplication
public class SampleControlPlaneApplication {

    public static void main(String[] args) {
        application().run(args);
    }

    /** The application as {@link #main} runs it: with the embedded broker when no cluster is given. */
    public static SpringApplication application() {
        SpringApplication application = new SpringApplication(SampleControlPlaneApplication.class);
        application.addListeners(new EmbeddedBrokerStarter());
        return application;
    }
}
