package io.krabka.coordination.sample;

import io.krabka.streams.coordination.CoordinationException;
import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.FencingToken;
import io.krabka.streams.coordination.LeadershipReleasedException;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * The control plane's work: while this member holds {@code controller}, send a command
 * every {@code sample.dispatch-interval} as a guarded write. Each write is one
 * transaction with the role's lease record, so it also renews the lease, and the broker
 * refuses it once another member took the role.
 */
@Component
public class CommandDispatcher {

    static final String ROLE = "controller";

    private static final Logger log = LoggerFactory.getLogger(CommandDispatcher.class);
    private static final byte[] KEY = ROLE.getBytes(StandardCharsets.UTF_8);

    private final JsonMapper json;
    private final String topic;
    private final Duration interval;

    public CommandDispatcher(
            JsonMapper json,
            @Value("${sample.commands-topic:sample-commands}") String topic,
            @Value("${sample.dispatch-interval:200ms}") Duration interval) {
        this.json = json;
        this.topic = topic;
        this.interval = interval;
    }

    /**
     * Runs on its own thread for one leadership. The leadership loop interrupts it when
     * the leadership ends; a write that the broker fenced ends it too.
     */
    @OnLeadership(role = ROLE)
    public void dispatch(Leadership leadership) throws InterruptedException {
        String member = leadership.member().value();
        long term = leadership.term();
        log.info("{} dispatches a command every {} to {} under term {}", member, interval, topic, term);
        for (long seq = 0; ; seq++) {
            FencingToken token = leadership.token();
            Command command =
                    Command.periodic(member, term, seq, token.producerId(), token.producerEpoch(), Instant.now());
            try {
                leadership.write(new ProducerRecord<>(topic, KEY, json.writeValueAsBytes(command)));
            } catch (LeadershipReleasedException moved) {
                log.info(
                        "{} stops dispatching: term {} was released (a handover, a drain or a stop) at command {}",
                        member,
                        term,
                        seq);
                return;
            } catch (FencedException fenced) {
                log.info("{} stops dispatching: the broker fenced term {} at command {}", member, term, seq);
                return;
            } catch (CoordinationException failed) {
                if (Thread.currentThread().isInterrupted() || !leadership.isActive()) {
                    log.info("{} stops dispatching: term {} ended at command {}", member, term, seq);
                    return;
                }
                // Not visible to the device; the next command takes the next seq.
                log.warn("{} could not write command {} of term {}: {}", member, seq, term, failed.getMessage());
            }
            Thread.sleep(interval.toMillis());
        }
    }
}
