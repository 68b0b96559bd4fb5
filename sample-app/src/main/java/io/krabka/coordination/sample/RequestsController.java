package io.krabka.coordination.sample;

import io.krabka.streams.coordination.pipeline.LeaderPipeline;
import io.krabka.streams.coordination.spring.LeaderPipelines;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.admin.Admin;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /requests?count=N}: sends N requests to {@code sample-requests} (what an
 * operator's tool would do). {@code GET /requests}: how many wait for the leader's
 * pipeline, as the cluster reports it, so any member can answer.
 */
@RestController
class RequestsController implements DisposableBean {

    private static final int MAX_COUNT = 10_000;
    private static final Duration LAG_TIMEOUT = Duration.ofSeconds(2);

    private final KafkaTemplate<String, String> template;
    private final LeaderPipelines pipelines;
    private final JsonMapper json;
    private final String topic;
    private final Admin admin;

    RequestsController(
            KafkaTemplate<String, String> template,
            LeaderPipelines pipelines,
            KafkaAdmin kafkaAdmin,
            JsonMapper json,
            @Value("${sample.requests-topic:sample-requests}") String topic) {
        this.template = template;
        this.pipelines = pipelines;
        this.json = json;
        this.topic = topic;
        this.admin = Admin.create(kafkaAdmin.getConfigurationProperties());
    }

    /** One request: a string id, and when it was sent. */
    record Request(String id, Instant sentAt) {}

    /** What {@code POST /requests} answers: the ids it sent, once the broker acknowledged all. */
    record Sent(List<String> ids) {}

    /**
     * What {@code GET /requests} answers.
     *
     * @param waiting requests no leader has committed a command for yet (the pipeline's input lag)
     * @param handledHere requests whose commands this member committed while it led
     */
    record Backlog(String topic, String group, long waiting, long handledHere) {}

    @PostMapping("/requests")
    Sent send(@RequestParam(defaultValue = "1") int count) {
        if (count < 1 || count > MAX_COUNT) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "count must be 1.." + MAX_COUNT);
        }
        String batch = UUID.randomUUID().toString().substring(0, 8);
        List<String> ids = new ArrayList<>(count);
        List<CompletableFuture<?>> acks = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String id = "req-" + batch + "-" + i;
            ids.add(id);
            acks.add(template.send(topic, id, json.writeValueAsString(new Request(id, Instant.now()))));
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
        return new Sent(ids);
    }

    @GetMapping("/requests")
    Backlog backlog() {
        LeaderPipelines.Entry entry = pipelines.entries().stream()
                .findFirst()
                .orElseThrow(() ->
                        new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE, "the pipeline is not built yet"));
        long waiting = LeaderPipeline.measureLag(admin, entry.pipeline().settings(), LAG_TIMEOUT);
        return new Backlog(
                topic,
                entry.pipeline().settings().groupId(),
                waiting,
                entry.pipeline().processedRecords());
    }

    @Override
    public void destroy() {
        admin.close(Duration.ofSeconds(2));
    }
}
