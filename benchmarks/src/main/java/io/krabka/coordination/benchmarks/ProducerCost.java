package io.krabka.coordination.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What one role costs a member while it holds the role, measured on the piece that grows
 * with the roles: a transactional producer that ran InitProducerId and sits idle between
 * renewals. Opens {@code n} of them, then reads the heap after a GC, the live threads, the
 * connections the producers report, and the process CPU over an idle window; each divided
 * by {@code n}.
 */
final class ProducerCost {

    /** Per producer: heap bytes, threads, connections, and CPU milliseconds per idle second. */
    record Cost(int producers, double heapBytes, double threads, double connections, double idleCpuMillisPerSecond) {}

    private ProducerCost() {}

    static Cost measure(Map<String, Object> connection, int n, Duration idle) throws InterruptedException {
        long heapBefore = SpringScaleBench.heapAfterGc();
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                Map<String, Object> settings = new HashMap<>(connection);
                settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "bench-cost-" + System.nanoTime() + "-" + i);
                settings.put(ProducerConfig.ACKS_CONFIG, "all");
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
                producers.add(producer);
                producer.initTransactions();
            }
            long heapHeld = SpringScaleBench.heapAfterGc();
            int threadsHeld = ManagementFactory.getThreadMXBean().getThreadCount();
            double connections = 0;
            for (KafkaProducer<byte[], byte[]> producer : producers) {
                for (Map.Entry<org.apache.kafka.common.MetricName, ? extends Metric> metric :
                        producer.metrics().entrySet()) {
                    if (metric.getKey().name().equals("connection-count")
                            && metric.getKey().group().equals("producer-metrics")) {
                        connections += ((Number) metric.getValue().metricValue()).doubleValue();
                    }
                }
            }
            CpuSplit cpu = new CpuSplit();
            Thread.sleep(idle.toMillis()); // a measurement window: the producers sit idle in it
            CpuSplit.Split spent = cpu.since();
            return new Cost(
                    n,
                    (double) (heapHeld - heapBefore) / n,
                    (double) (threadsHeld - threadsBefore) / n,
                    connections / n,
                    spent.processSeconds() * 1000 / spent.wallSeconds() / n);
        } finally {
            producers.parallelStream().forEach(p -> p.close(Duration.ofSeconds(5)));
        }
    }
}
