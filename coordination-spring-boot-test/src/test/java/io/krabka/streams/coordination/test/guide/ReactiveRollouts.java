package io.krabka.streams.coordination.test.guide;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.routing.LeaderOnly;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

// tag::readme[]
@RestController
class ReactiveRollouts {

  @LeaderOnly(role = "controller")                     // routed as on Spring MVC
  @PostMapping("/rollouts/{id}/start")
  Mono<ResponseEntity<String>> start(@PathVariable String id,
                                     @RequestHeader("Idempotency-Key") String key,
                                     GuardedSender<String, String> sender,
                                     Leadership leadership) {
    // sendAsync does not block the event loop; if this member is deposed meanwhile, the
    // broker refuses the write, the Mono fails, and the caller is answered 503 (deposed).
    return Mono.fromFuture(sender.sendAsync("rollout-commands", key, "start " + id))
        .map(written -> ResponseEntity.accepted()
            .body("rollout " + id + " started under term " + leadership.term()));
  }
}
// end::readme[]
