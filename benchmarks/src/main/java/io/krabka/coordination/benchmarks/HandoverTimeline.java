package io.krabka.coordination.benchmarks;

import io.krabka.streams.coordination.ConsumedOffsets;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.TopicConfigurationException;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Where a graceful handover spends its time, seen from outside the engine: each member's
 * transport is wrapped in a {@link Timed} one that records when each call began and ended
 * and when the watcher delivered news, and {@link #steps} turns one handover's calls into
 * the steps of its path (issue 39, item 1). Nothing in the engine is instrumented for it;
 * the Kafka client's own share of InitProducerId is taken apart by {@link InitProducerIdBreakdown}.
 */
final class HandoverTimeline {

    /**
     * What {@link #steps} reports, in the order a handover goes through it: when each call of the holder's release and
     * of the standby's grant begins (milliseconds after {@code release()} was called) and how long it takes. The holder
     * deregisters first, so the standby's wake-up, read and InitProducerId overlap the release's own transaction.
     */
    static final List<String> STEPS = List.of(
            "holder: deregistration begins",
            "holder: deregistration takes",
            "holder: release transaction (lease tombstone) begins",
            "holder: release transaction takes",
            "standby: first news after release() at",
            "standby: read begins",
            "standby: read takes",
            "standby: InitProducerId (initTransactions) begins",
            "standby: InitProducerId takes",
            "standby: grant's describe begins",
            "standby: grant's describe takes",
            "standby: grant's transaction begins",
            "standby: grant's transaction takes",
            "standby: Listener.granted at");

    /** One call: which member made it, what it was, when it began and ended (nanoTime). */
    record Call(String side, String kind, long start, long end) {}

    private final List<Call> calls = new ArrayList<>();
    private volatile boolean recording;

    /** Forgets what was recorded and records from now on. */
    synchronized void start() {
        calls.clear();
        recording = true;
    }

    /** Stops recording and returns what was recorded, in the order the calls ended. */
    synchronized List<Call> stop() {
        recording = false;
        return List.copyOf(calls);
    }

    private void record(String side, String kind, long start, long end) {
        if (recording) {
            synchronized (this) {
                calls.add(new Call(side, kind, start, end));
            }
        }
    }

    /**
     * One handover's steps ({@link #STEPS}), in nanoseconds, from its calls: {@code holder}
     * released at {@code released}, {@code standby} was granted at {@code granted}. Each
     * standby call is the first of its kind after the one before it. A step whose call is
     * missing is left out, so a step's samples are the handovers that went through it.
     */
    static Map<String, Long> steps(List<Call> calls, String holder, String standby, long released, long granted) {
        Map<String, Long> steps = new LinkedHashMap<>();
        first(calls, holder, "deregister", released).ifPresent(c -> put(steps, 0, c, released));
        first(calls, holder, "transact", released).ifPresent(c -> put(steps, 2, c, released));
        Optional<Call> news = first(calls, standby, "news", released);
        news.ifPresent(c -> steps.put(STEPS.get(4), c.start - released));
        long after = news.map(Call::start).orElse(released);
        String[] kinds = {"read", "initEpoch", "describeEpoch", "transact"};
        for (int i = 0; i < kinds.length; i++) {
            Optional<Call> call = first(calls, standby, kinds[i], after);
            if (call.isPresent()) {
                put(steps, 5 + 2 * i, call.get(), released);
                after = call.get().end;
            }
        }
        steps.put(STEPS.get(STEPS.size() - 1), granted - released);
        return steps;
    }

    private static void put(Map<String, Long> steps, int begins, Call call, long released) {
        steps.put(STEPS.get(begins), call.start - released);
        steps.put(STEPS.get(begins + 1), call.end - call.start);
    }

    private static Optional<Call> first(List<Call> calls, String side, String kind, long from) {
        return calls.stream()
                .filter(c -> c.side.equals(side) && c.kind.equals(kind) && c.start >= from)
                .min((x, y) -> Long.compare(x.start, y.start));
    }

    /** {@code delegate} with every call recorded in this timeline under {@code side}. */
    CoordinationTransport wrap(CoordinationTransport delegate, String side) {
        return new Timed(delegate, side);
    }

    private final class Timed implements CoordinationTransport {

        private final CoordinationTransport delegate;
        private final String side;

        Timed(CoordinationTransport delegate, String side) {
            this.delegate = delegate;
            this.side = side;
        }

        private <T> T timed(String kind, Supplier<T> call) {
            long start = System.nanoTime();
            try {
                return call.get();
            } finally {
                record(side, kind, start, System.nanoTime());
            }
        }

        private void timed(String kind, Runnable call) {
            timed(kind, () -> {
                call.run();
                return null;
            });
        }

        @Override
        public String topic() {
            return delegate.topic();
        }

        @Override
        public String location() {
            return delegate.location();
        }

        @Override
        public int partitionCount() {
            return delegate.partitionCount();
        }

        @Override
        public long register(Role role, MemberId member, long registeredAt) {
            return timed("register", () -> delegate.register(role, member, registeredAt));
        }

        @Override
        public void deregister(Role role, MemberId member) {
            timed("deregister", () -> delegate.deregister(role, member));
        }

        @Override
        public RoleRecords read(Role role, long fromOffset, Duration maxWait) {
            return timed("read", () -> delegate.read(role, fromOffset, maxWait));
        }

        @Override
        public Map<Role, RoleRecords> readAll(Map<Role, Long> fromOffsets) {
            return timed("read", () -> delegate.readAll(fromOffsets));
        }

        @Override
        public RoleEpoch initEpoch(Role role) {
            return new TimedEpoch(timed("initEpoch", () -> delegate.initEpoch(role)));
        }

        @Override
        public void prepareEpoch(Role role) {
            timed("prepareEpoch", () -> delegate.prepareEpoch(role));
        }

        @Override
        public Duration minCompactionLag() {
            return delegate.minCompactionLag();
        }

        @Override
        public void discardPrepared(Role role) {
            delegate.discardPrepared(role);
        }

        @Override
        public AutoCloseable watch(Role role, Consumer<RoleNews> onNews) {
            return delegate.watch(role, news -> {
                long at = System.nanoTime();
                record(side, "news", at, at);
                onNews.accept(news);
            });
        }

        @Override
        public boolean watches() {
            return delegate.watches();
        }

        @Override
        public boolean tellsEverythingSince(Role role, long fromOffset) {
            return delegate.tellsEverythingSince(role, fromOffset);
        }

        @Override
        public Optional<TopicConfigurationException> topicProblem() {
            return delegate.topicProblem();
        }

        @Override
        public Optional<String> otherTopicWrittenBy(Role role, long producerId) {
            return delegate.otherTopicWrittenBy(role, producerId);
        }

        @Override
        public Optional<ProducerState> describeEpoch(Role role) {
            return timed("describeEpoch", () -> delegate.describeEpoch(role));
        }

        @Override
        public Optional<ProducerState> describeEpoch(Role role, Duration timeout) {
            return timed("describeEpoch", () -> delegate.describeEpoch(role, timeout));
        }

        @Override
        public Map<Role, Optional<ProducerState>> describeEpochs(Collection<Role> roles) {
            return timed("describeEpoch", () -> delegate.describeEpochs(roles));
        }

        @Override
        public void close() {
            delegate.close();
        }

        private final class TimedEpoch implements RoleEpoch {

            private final RoleEpoch delegate;

            TimedEpoch(RoleEpoch delegate) {
                this.delegate = delegate;
            }

            @Override
            public Role role() {
                return delegate.role();
            }

            @Override
            public List<RecordMetadata> transact(
                    List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed) {
                return timed("transact", () -> delegate.transact(records, consumed));
            }

            @Override
            public List<RecordMetadata> transact(
                    List<ProducerRecord<byte[], byte[]>> records, ConsumedOffsets consumed, Duration commitRetry) {
                return timed("transact", () -> delegate.transact(records, consumed, commitRetry));
            }

            @Override
            public long featureGeneration() {
                return delegate.featureGeneration();
            }

            @Override
            public boolean usable() {
                return delegate.usable();
            }

            @Override
            public void close() {
                delegate.close();
            }
        }
    }
}
