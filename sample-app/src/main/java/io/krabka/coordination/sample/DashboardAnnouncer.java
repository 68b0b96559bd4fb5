package io.krabka.coordination.sample;

import io.krabka.streams.coordination.spring.LeadershipLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** Says where the dashboard is once the application is ready. */
@Component
class DashboardAnnouncer {

    private static final Logger log = LoggerFactory.getLogger(DashboardAnnouncer.class);

    private final LeadershipLoop loop;

    DashboardAnnouncer(LeadershipLoop loop) {
        this.loop = loop;
    }

    @EventListener
    void ready(ApplicationReadyEvent event) {
        Environment environment = event.getApplicationContext().getEnvironment();
        String port = environment.getProperty("local.server.port", environment.getProperty("server.port", "8080"));
        log.info(
                "Dashboard: http://localhost:{}/ (member {}, Kafka at {})",
                port,
                loop.member().value(),
                environment.getProperty(EmbeddedBrokerStarter.BOOTSTRAP_SERVERS));
    }
}
