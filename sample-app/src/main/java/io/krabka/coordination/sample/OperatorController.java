package io.krabka.coordination.sample;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.routing.LeaderOnly;
import io.krabka.streams.coordination.spring.routing.RoutingHeaders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /operator/ping}: an operator's call that only the leader may answer. Any
 * member accepts it; {@code @LeaderOnly} forwards it to the holder of {@code controller},
 * which answers with its name and term, and with the member that forwarded it, if one did.
 * The dashboard's "Ask the leader" button sends it to the member that serves the page.
 */
@RestController
class OperatorController {

    /**
     * What the holder answers.
     *
     * @param handledBy the member that handled it: the holder
     * @param term the term it was handled under
     * @param forwardedBy the member that forwarded it here, or null when it came straight here
     */
    record Handled(String handledBy, long term, String forwardedBy) {}

    @LeaderOnly(role = "controller")
    @PostMapping("/operator/ping")
    Handled ping(
            Leadership leadership,
            @RequestHeader(value = RoutingHeaders.FORWARDED_BY, required = false) String forwardedBy) {
        return new Handled(leadership.member().value(), leadership.term(), forwardedBy);
    }
}
