package io.krabka.coordination.benchmarks;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where a JVM's CPU went between two instants: the process's CPU time, the JIT's and the
 * collectors' share, and each live thread's CPU time grouped by its name's prefix. The
 * member and an in-process broker share the JVM, so this says which of them a CPU-bound
 * phase spent its two cores on. With the broker in a JVM of its own, that JVM's CPU time
 * is taken too ({@code brokerSeconds}; -1 when the broker runs in this JVM).
 */
final class CpuSplit {

    /** CPU seconds between the two snapshots; byPrefix sorted by seconds, largest first. */
    record Split(
            double wallSeconds,
            double processSeconds,
            double compileSeconds,
            double gcSeconds,
            Map<String, Double> byPrefix,
            double brokerSeconds) {

        /** Process CPU not in a thread that was live at both snapshots: compiler and GC threads, threads that ended. */
        double unattributedSeconds() {
            return processSeconds
                    - byPrefix.values().stream()
                            .mapToDouble(Double::doubleValue)
                            .sum();
        }
    }

    private final long wallNanos = System.nanoTime();
    private final long processNanos = processCpuNanos();
    private final long compileMillis = ManagementFactory.getCompilationMXBean().getTotalCompilationTime();
    private final long gcMillis = gcMillis();
    private final Map<Long, Long> threadNanos = threadCpuNanos();
    private final long brokerPid;
    private final long brokerNanos;

    /** Takes the first snapshot now; the broker runs in this JVM. */
    CpuSplit() {
        this(-1);
    }

    /** Takes the first snapshot now, of this JVM and of the broker JVM {@code brokerPid} (-1: none). */
    CpuSplit(long brokerPid) {
        this.brokerPid = brokerPid;
        this.brokerNanos = brokerCpuNanos(brokerPid);
    }

    /** The CPU spent since this snapshot was taken. */
    Split since() {
        Map<Long, Long> now = threadCpuNanos();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Double> byPrefix = new HashMap<>();
        for (Map.Entry<Long, Long> thread : now.entrySet()) {
            ThreadInfo info = threads.getThreadInfo(thread.getKey());
            if (info == null) {
                continue;
            }
            long spent = thread.getValue() - threadNanos.getOrDefault(thread.getKey(), 0L);
            byPrefix.merge(SpringScaleBench.prefix(info.getThreadName()), spent / 1e9, Double::sum);
        }
        Map<String, Double> sorted = byPrefix.entrySet().stream()
                .sorted((a, b) -> Double.compare(b.getValue(), a.getValue()))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, LinkedHashMap::new));
        return new Split(
                (System.nanoTime() - wallNanos) / 1e9,
                (processCpuNanos() - processNanos) / 1e9,
                (ManagementFactory.getCompilationMXBean().getTotalCompilationTime() - compileMillis) / 1e3,
                (gcMillis() - gcMillis) / 1e3,
                sorted,
                brokerPid < 0 ? -1 : (brokerCpuNanos(brokerPid) - brokerNanos) / 1e9);
    }

    /** The CPU time of process {@code pid} so far (user and system), 0 when it is not known. */
    private static long brokerCpuNanos(long pid) {
        if (pid < 0) {
            return 0;
        }
        return ProcessHandle.of(pid)
                .flatMap(process -> process.info().totalCpuDuration())
                .map(java.time.Duration::toNanos)
                .orElse(0L);
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static long gcMillis() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(GarbageCollectorMXBean::getCollectionTime)
                .sum();
    }

    private static Map<Long, Long> threadCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> cpu = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long nanos = threads.getThreadCpuTime(id);
            if (nanos >= 0) {
                cpu.put(id, nanos);
            }
        }
        return cpu;
    }
}
