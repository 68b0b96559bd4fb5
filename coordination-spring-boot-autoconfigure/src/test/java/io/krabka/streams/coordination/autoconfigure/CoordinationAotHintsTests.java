package io.krabka.streams.coordination.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.LeaderListener;
import io.krabka.streams.coordination.spring.OnLeadership;
import java.io.InputStream;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationCode;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.Lifecycle;
import org.springframework.javapoet.ClassName;

/** The hints the starter's reflection needs under AOT, checked with Spring's predicates. */
class CoordinationAotHintsTests {

    static class Sweeper {
        @OnLeadership(role = "controller")
        void sweep(Leadership leadership) {}

        void unrelated() {}
    }

    static class Handler {
        @LeaderListener(role = "controller", topics = "requests")
        ProducerRecord<String, String> onRequest(ConsumerRecord<String, String> request) {
            return null;
        }
    }

    @OnLeadership(role = "controller")
    static class Scheduler implements Lifecycle {
        @Override
        public void start() {}

        @Override
        public void stop() {}

        @Override
        public boolean isRunning() {
            return false;
        }
    }

    static class Plain {
        void work() {}
    }

    private static RuntimeHints hintsFor(Class<?> type) {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        beans.registerBeanDefinition("bean", new RootBeanDefinition(type));
        BeanRegistrationAotContribution contribution =
                new CoordinationBeanRegistrationAotProcessor().processAheadOfTime(RegisteredBean.of(beans, "bean"));
        GenerationContext context = new DefaultGenerationContext(
                new ClassNameGenerator(ClassName.get(CoordinationAotHintsTests.class)), new InMemoryGeneratedFiles());
        if (contribution != null) {
            contribution.applyTo(context, (BeanRegistrationCode) null);
        }
        return context.getRuntimeHints();
    }

    @Test
    void onLeadershipMethodsMayBeInvoked() throws Exception {
        RuntimeHints hints = hintsFor(Sweeper.class);
        assertThat(RuntimeHintsPredicates.reflection()
                        .onMethodInvocation(Sweeper.class.getDeclaredMethod("sweep", Leadership.class)))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(Sweeper.class)).accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Sweeper.class.getDeclaredMethod("unrelated")))
                .rejects(hints);
    }

    @Test
    void leaderListenerMethodsMayBeInvoked() throws Exception {
        assertThat(RuntimeHintsPredicates.reflection()
                        .onMethodInvocation(Handler.class.getDeclaredMethod("onRequest", ConsumerRecord.class)))
                .accepts(hintsFor(Handler.class));
    }

    @Test
    void anOnLeadershipLifecycleBeanIsRegisteredAndAPlainBeanGetsNothing() {
        assertThat(RuntimeHintsPredicates.reflection().onType(Scheduler.class)).accepts(hintsFor(Scheduler.class));
        assertThat(hintsFor(Plain.class).reflection().typeHints()).isEmpty();
    }

    @Test
    void registeredWhereSpringAotLooksForProcessors() throws Exception {
        Properties factories = new Properties();
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring/aot.factories")) {
            factories.load(in);
        }
        assertThat(factories.getProperty("org.springframework.beans.factory.aot.BeanRegistrationAotProcessor"))
                .isEqualTo(CoordinationBeanRegistrationAotProcessor.class.getName());
    }
}
