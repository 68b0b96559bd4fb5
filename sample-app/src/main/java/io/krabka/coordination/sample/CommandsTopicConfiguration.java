package io.krabka.coordination.sample;

import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.TopicBuilder;

/** The device's command topic, created at startup by Spring Kafka's KafkaAdmin when it is missing. */
@Configuration(proxyBeanMethods = false)
class CommandsTopicConfiguration {

    @Bean
    NewTopic sampleCommandsTopic(@Value("${sample.commands-topic:sample-commands}") String topic,
            @Value("${sample.commands-topic-replicas:1}") short replicas) {
        // One partition: the device reads the commands in the one order the log gives them.
        return TopicBuilder.name(topic).partitions(1).replicas(replicas).build();
    }
}
