package io.krabka.streams.coordination.test.readme;

import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

// tag::readme[]
@Component
class Dispatcher {
  private volatile boolean running;

  @OnLeadership(role = "controller")
  void dispatch(GuardedSender<String, String> commands) throws InterruptedException {
    running = true;
    try {
      while (true) {
        commands.send("commands", "device-7", nextCommand());   // fenced once deposed
        TimeUnit.MILLISECONDS.sleep(200);
      }
    } finally {
      running = false;
    }
  }

  boolean isRunning() {
    return running;
  }

  private String nextCommand() {
    return "{\"action\":\"open-valve\"}";
  }
}
// end::readme[]
