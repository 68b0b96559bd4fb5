package io.krabka.streams.coordination.test.guide;

import io.krabka.streams.coordination.LeadershipEndCause;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

// tag::readme[]
@Component
class HeldRoles {
  private static final Logger log = LoggerFactory.getLogger(HeldRoles.class);
  private final Map<Role, Long> terms = new ConcurrentHashMap<>();

  @EventListener
  void granted(LeadershipGrantedEvent event) {       // before the role's work starts
    terms.put(event.role(), event.token().term());
    log.info("{} holds {} until {}", event.member(), event.role(), event.leadership().deadline());
  }

  @EventListener
  void ended(LeadershipEndedEvent event) {           // after the role's work stopped
    terms.remove(event.role(), event.token().term());
    if (event.cause() == LeadershipEndCause.FAILED) {
      log.error("{} gave {} up", event.member(), event.role(), event.failure().orElse(null));
    }
  }

  Map<Role, Long> terms() {                           // role -> term of the leadership held
    return Map.copyOf(terms);
  }
}
// end::readme[]
