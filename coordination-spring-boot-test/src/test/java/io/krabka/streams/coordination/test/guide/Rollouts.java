package io.krabka.streams.coordination.test.guide;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.routing.LeaderOnly;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

// tag::readme[]
@RestController
class Rollouts {

  @LeaderOnly(role = "controller")                     // any member accepts it; the holder of controller runs it
  @PostMapping("/rollouts/{id}/start")
  ResponseEntity<String> start(@PathVariable String id,
                               @RequestHeader("Idempotency-Key") String key,
                               GuardedSender<String, String> sender,   // fenced by the term it was routed under
                               Leadership leadership) {
    // Keyed by the caller's idempotency key: a retry (after a 503, a timeout) writes the
    // same key again, and whoever applies rollout-commands applies each key once.
    sender.send("rollout-commands", key, "start " + id);
    return ResponseEntity.accepted().body("rollout " + id + " started under term " + leadership.term());
  }
}
// end::readme[]
