package io.krabka.streams.coordination.test.guide;

import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.config.TopicBuilder;

/**
 * The application of the USER-GUIDE's pipeline test and event listener: its topics, its
 * RequestDispatcher and HeldRoles. No Spring MVC (on the test class path for
 * LeaderOnlyTestKitTest): the guide's MVC and WebFlux controllers map the same paths.
 */
@SpringBootApplication(excludeName = "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration")
class GuideApp {

    @Bean
    NewTopic requests() {
        return TopicBuilder.name("requests").partitions(3).build();
    }

    @Bean
    NewTopic commands() {
        return TopicBuilder.name("commands").partitions(1).build();
    }
}
