package io.krabka.coordination.sample;

import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.TopicBuilder;

/** The device's command topic and the pipeline's request topics, created at startup by Spring Kafka's KafkaAdmin when it is missing. */
@Configuration(proxyBeanMethods = false)
class CommandsTopicConfiguration {

    @Bean
    NewTopic sampleCommandsTopic(
            @Value("${sample.commands-topic:sample-commands}") String topic,
            @Value("${sample.commands-topic-replicas:1}") short replicas) {
        // One partition: the device reads the commands in the one order the log gives them.
        return TopicBuilder.name(topic).partitions(1).replicas(replicas).build();
    }

    /** Requests for the leader's pipeline; two partitions, so a batch commits offsets of both. */
    @Bean
    NewTopic sampleRequestsTopic(
            @Value("${sample.requests-topic:sample-requests}") String topic,
            @Value("${sample.commands-topic-replicas:1}") short replicas) {
        return TopicBuilder.name(topic).partitions(2).replicas(replicas).build();
    }

    /** Where a request that is not JSON with a string "id" goes, with the reason in its headers. */
    @Bean
    NewTopic sampleRequestsDeadLetterTopic(
            @Value("${sample.requests-topic:sample-requests}") String topic,
            @Value("${sample.commands-topic-replicas:1}") short replicas) {
        return TopicBuilder.name(topic + ".DLT")
                .partitions(1)
                .replicas(replicas)
                .build();
    }
}
