package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.spring.LeadershipEndedEvent;
import io.krabka.streams.coordination.spring.LeadershipGrantedEvent;
import io.krabka.streams.coordination.spring.LeadershipLoop;
import io.krabka.streams.coordination.spring.MemberRoleState;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.EventListener;

/**
 * One member JVM of {@link SpreadBench}: a Spring Boot application on the starter with
 * {@code krabka.coordination.balance=spread}, contending for {@code roles} roles. Prints
 * {@code HELD <nanoTime> <n>} every 200 ms, {@code GRANTED <nanoTime> <role>} and
 * {@code ENDED <nanoTime> <role> <cause>} as they happen, and on {@code stats} from stdin
 * {@code STATS <threads> <heap used after a GC, bytes> <moves> <threads by name>}.
 *
 * <p>Arguments {@code key=value}: {@code bootstrap}, {@code topic}, {@code member}, {@code roles}, {@code leaseMs},
 * {@code renewMs}, {@code staggerMs}.
 */
public final class SpreadMember {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        /** Each grant and end on stdout with the monotonic clock, which the bench JVM shares on Linux: the gaps of the moves. */
        @EventListener
        void granted(LeadershipGrantedEvent event) {
            System.out.println(
                    "GRANTED " + System.nanoTime() + " " + event.role().name());
        }

        @EventListener
        void ended(LeadershipEndedEvent event) {
            System.out.println("ENDED " + System.nanoTime() + " " + event.role().name() + " " + event.cause());
        }
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String arg : argv) {
            args.put(arg.substring(0, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
        }
        int roles = Integer.parseInt(args.get("roles"));
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < roles; i++) {
            list.append(i == 0 ? "" : ",").append(String.format("spread-%04d", i));
        }
        Map<String, Object> properties = new HashMap<>();
        properties.put("spring.kafka.bootstrap-servers", args.get("bootstrap"));
        properties.put("krabka.coordination.member-id", args.get("member"));
        properties.put("krabka.coordination.roles", list.toString());
        properties.put("krabka.coordination.balance", "spread");
        properties.put("krabka.coordination.lease.duration", args.get("leaseMs") + "ms");
        properties.put("krabka.coordination.lease.renew-interval", args.get("renewMs") + "ms");
        properties.put("krabka.coordination.lease.challenge-stagger", args.getOrDefault("staggerMs", "1000") + "ms");
        properties.put("krabka.coordination.topic.name", args.get("topic"));
        properties.put("krabka.coordination.topic.replication-factor", "1");
        properties.put("krabka.coordination.topic.allow-unsafe", "true");
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(properties)
                .run();
        LeadershipLoop loop = context.getBean(LeadershipLoop.class);
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
        ticker.scheduleAtFixedRate(
                () -> {
                    long held = loop.roles().stream()
                            .filter(role -> loop.state(role) == MemberRoleState.LEADER)
                            .count();
                    System.out.println("HELD " + System.nanoTime() + " " + held);
                },
                0,
                200,
                TimeUnit.MILLISECONDS);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("stats")) {
                System.gc();
                long heap =
                        ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                System.out.println(
                        "STATS " + ManagementFactory.getThreadMXBean().getThreadCount() + " " + heap + " "
                                + loop.share().movesOut() + " " + threadsByPrefix());
            }
        }
        ticker.shutdownNow();
        context.close();
    }

    /** Live threads by name less a trailing number, the largest groups first: {@code kafka-producer-network-thread=51,...}. */
    private static String threadsByPrefix() {
        Map<String, Integer> groups = new TreeMap<>();
        Thread.getAllStackTraces()
                .keySet()
                .forEach(thread -> groups.merge(
                        thread.getName().replaceAll("[-_ ]?\\d+$", "").replaceAll(" \\| .*$", ""), 1, Integer::sum));
        return groups.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(8)
                .map(e -> e.getKey().replace(' ', '_') + "=" + e.getValue())
                .collect(Collectors.joining(","));
    }
}
