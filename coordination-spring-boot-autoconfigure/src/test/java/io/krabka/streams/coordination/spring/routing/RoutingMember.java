package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A member JVM of {@link LeaderOnlyFailoverIT}: the starter and one {@link LeaderOnly}
 * handler that writes who handled a command, under which term, through a
 * {@link GuardedSender}. Configured on the command line.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(RoutingMember.Commands.class)
public class RoutingMember {

    public static void main(String[] args) {
        SpringApplication.run(RoutingMember.class, args);
    }

    @RestController
    static class Commands {

        private final String handled;

        Commands(@Value("${routing.handled-topic}") String handled) {
            this.handled = handled;
        }

        @LeaderOnly(role = "${routing.role}")
        @PostMapping("/commands/{id}")
        String handle(@PathVariable String id, GuardedSender<String, String> sender, Leadership leadership) {
            String by = leadership.member() + "@" + leadership.term();
            sender.send(handled, id, by);
            return by;
        }
    }
}
