package io.krabka.streams.coordination.spring.routing;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import java.util.concurrent.ExecutionException;
import org.springframework.boot.WebApplicationType;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@link LeaderOnly} on Spring MVC: the cases of {@link LeaderOnlyRoutingITBase}, on
 * three Tomcat members whose handlers write with blocking guarded sends.
 */
class LeaderOnlyRoutingIT extends LeaderOnlyRoutingITBase {

    LeaderOnlyRoutingIT() {
        super(WebApplicationType.SERVLET, Commands.class);
    }

    @RestController
    static class Commands extends RoutedCommands {

        /** Writes who handled the command, under which term, through the leadership's guarded writes. */
        @LeaderOnly(role = ROLE)
        @PostMapping("/commands/{id}")
        String handle(
                @PathVariable String id,
                @RequestBody String body,
                GuardedSender<String, String> sender,
                Leadership leadership,
                @RequestHeader(value = "Authorization", required = false) String authorization,
                @RequestHeader(value = "Keep-Alive", required = false) String keepAlive,
                @RequestHeader(value = RoutingHeaders.FORWARDED_BY, required = false) String forwardedBy) {
            sender.send(handled, id, leadership.member() + "@" + leadership.term());
            return leadership.member() + " " + leadership.term() + " body=" + body + " auth=" + authorization
                    + " keep-alive=" + keepAlive + " via=" + forwardedBy;
        }

        /** Waits for the test before it writes: the test deposes the holder meanwhile. */
        @LeaderOnly(role = ROLE)
        @PostMapping("/slow/{id}")
        String slow(@PathVariable String id, GuardedSender<String, String> sender, Leadership leadership)
                throws InterruptedException, ExecutionException {
            slowEntered.countDown();
            slowProceed.get();
            sender.send(handled, id, leadership.member() + "@" + leadership.term());
            return "written";
        }
    }
}
