package io.krabka.streams.coordination.spring;

import io.krabka.streams.coordination.CoordinationAuthorizationException;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.pipeline.LeaderPipeline;
import io.krabka.streams.coordination.pipeline.PipelineSettings;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.AuthorizationException;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.core.env.PropertyResolver;
import org.springframework.format.datetime.standard.DurationFormatterUtils;

/**
 * One {@link LeaderListener} method: checked when its bean is created, its pipeline built
 * on first use (when the leadership loop starts), run on a thread of its own per
 * leadership.
 */
final class LeaderListenerMethod {

    private final Role role;
    private final String where;
    private final PipelineSettings settings;
    private final Object bean;
    private final Method method;
    private final boolean batch;
    private final boolean takesLeadership;
    private final Supplier<LeaderPipelines> pipelines;
    private volatile @Nullable LeaderPipeline pipeline;

    LeaderListenerMethod(
            Role role,
            Object bean,
            Method method,
            LeaderListener annotation,
            String where,
            PropertyResolver placeholders,
            Supplier<LeaderPipelines> pipelines) {
        this.role = role;
        this.bean = bean;
        this.method = method;
        this.where = where;
        this.pipelines = pipelines;
        Class<?>[] parameters = method.getParameterTypes();
        boolean shapeOk = (parameters.length == 1 || parameters.length == 2 && parameters[1] == Leadership.class)
                && (parameters[0] == ConsumerRecord.class || parameters[0] == List.class);
        Class<?> returns = method.getReturnType();
        boolean returnOk = returns == void.class
                || ProducerRecord.class.isAssignableFrom(returns)
                || Collection.class.isAssignableFrom(returns);
        if (!shapeOk || !returnOk) {
            throw new BeanInitializationException("@LeaderListener method " + where + " must take a ConsumerRecord or a"
                    + " List<ConsumerRecord>, optionally followed by a Leadership, and return a ProducerRecord, a collection"
                    + " of them, or void");
        }
        this.batch = parameters[0] == List.class;
        this.takesLeadership = parameters.length == 2;
        try {
            List<String> topics = Arrays.stream(annotation.topics())
                    .map(placeholders::resolveRequiredPlaceholders)
                    .toList();
            PipelineSettings defaults = new PipelineSettings(
                    topics,
                    PipelineSettings.defaultGroupId(role),
                    PipelineSettings.DEFAULT_MAX_BATCH_RECORDS,
                    PipelineSettings.DEFAULT_MAX_BATCH_WAIT);
            String group = placeholders.resolveRequiredPlaceholders(annotation.groupId());
            String records = placeholders.resolveRequiredPlaceholders(annotation.maxBatchRecords());
            String wait = placeholders.resolveRequiredPlaceholders(annotation.maxBatchWait());
            this.settings = defaults.withGroupId(group.isEmpty() ? defaults.groupId() : group)
                    .withMaxBatchRecords(
                            records.isEmpty() ? defaults.maxBatchRecords() : Integer.parseInt(records.trim()))
                    .withMaxBatchWait(
                            wait.isEmpty()
                                    ? defaults.maxBatchWait()
                                    : DurationFormatterUtils.detectAndParse(wait.trim()))
                    .withDeadLetters(true);
        } catch (IllegalArgumentException e) {
            throw new BeanInitializationException(
                    "@LeaderListener on " + where + " is not valid: " + e.getMessage(), e);
        }
    }

    Role role() {
        return role;
    }

    /** Builds the pipeline unless built; fails naming the listener when it cannot be. */
    LeaderPipeline pipeline() {
        LeaderPipeline built = pipeline;
        if (built == null) {
            synchronized (this) {
                if (pipeline == null) {
                    pipeline = pipelines
                            .get()
                            .create(
                                    role,
                                    where,
                                    settings,
                                    serdes -> new LeaderListenerProcessor(
                                                    bean,
                                                    method,
                                                    batch,
                                                    takesLeadership,
                                                    where,
                                                    settings.groupId(),
                                                    serdes)
                                            .forPipeline());
                }
                built = pipeline;
            }
        }
        return built;
    }

    /** The work that runs the pipeline while the role is held. */
    RoleWork work() {
        return new RunnerRoleWork(
                "krabka-pipeline-" + role + "-" + method.getDeclaringClass().getSimpleName() + "." + method.getName(),
                this::run);
    }

    private void run(Leadership leadership) throws Exception {
        try {
            pipeline().run(leadership);
        } catch (AuthorizationException refused) {
            // Kafka's own text names the topic or group but not the pipeline, nor what it needs.
            throw notAuthorized(refused);
        }
    }

    /** A refusal of the pipeline's input consumer, named with the listener and the ACLs its pipeline needs. */
    private CoordinationAuthorizationException notAuthorized(AuthorizationException refused) {
        String reason = String.valueOf(refused.getMessage());
        return new CoordinationAuthorizationException(
                "@LeaderListener " + where + " of role " + role
                        + " was refused by the cluster's ACLs: "
                        + (reason.endsWith(".") ? reason.substring(0, reason.length() - 1) : reason)
                        + ". Its pipeline needs Read on topic(s) " + settings.inputTopics() + ", Read on Group:"
                        + settings.groupId()
                        + ", and Write on every topic it writes (its outputs, and <input>"
                        + LeaderListenerProcessor.DEAD_LETTER_SUFFIX
                        + " for dead letters)",
                refused);
    }

    @Override
    public String toString() {
        return where + " (" + settings.inputTopics() + ", group " + settings.groupId() + ", every "
                + settings.maxBatchWait() + " or " + settings.maxBatchRecords() + " records)";
    }
}
