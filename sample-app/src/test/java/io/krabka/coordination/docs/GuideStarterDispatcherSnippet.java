package io.krabka.coordination.docs;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.LeadershipReleasedException;
import io.krabka.streams.coordination.spring.GuardedSender;
import io.krabka.streams.coordination.spring.OnLeadership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The compiled twin of the USER-GUIDE's starter dispatcher. An inner class, so neither
 * component scanning nor the test runner ever picks it up.
 */
class GuideStarterDispatcherSnippet {

    // snippet-begin docs/USER-GUIDE.md: the starter's dispatcher
    @Component
    class Dispatcher {
      private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

      @OnLeadership(role = "controller")
      void dispatch(GuardedSender<String, String> commands) throws InterruptedException {
        try {
          while (!Thread.currentThread().isInterrupted()) {
            commands.send("commands", "device-7", nextCommand());   // spring.kafka.producer serializers; fenced once deposed
          }
        } catch (LeadershipReleasedException moved) {
          log.info("The role moved on as planned: {}", moved.getMessage());   // a release, handover or drain
        } catch (FencedException deposed) {
          log.warn("Deposed: {}", deposed.getMessage());                      // FENCED, EXPIRED or FAILED: worth a look
        }
      }
    }
    // snippet-end

    private String nextCommand() {
        return "{\"action\":\"open-valve\"}";
    }
}
