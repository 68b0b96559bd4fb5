package io.krabka.streams.coordination.test.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.krabka.streams.coordination.FencedException;
import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.ProducerState;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.RecordKind;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleEpoch;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link CoordinationTransport} keeps. One subclass runs it against
 * an in-memory cluster, another against a real Kafka broker.
 */
public abstract class CoordinationTransportContract {

    private final List<CoordinationTransport> opened = new ArrayList<>();

    /** A new member's transport on the shared cluster. */
    protected abstract CoordinationTransport newTransport();

    /** Sets the cluster's finalized transaction version for roles initialized afterwards. */
    protected abstract void setTransactionVersion(short version);

    protected CoordinationTransport transport() {
        CoordinationTransport transport = newTransport();
        opened.add(transport);
        return transport;
    }

    @AfterEach
    void closeTransports() {
        opened.forEach(CoordinationTransport::close);
        setTransactionVersion((short) 2);
    }

    protected static Role freshRole(String prefix) {
        return Role.of(prefix + "-" + UUID.randomUUID().toString().substring(0, 8));
    }

    private static ProducerRecord<byte[], byte[]> lease(
            CoordinationTransport transport, Role role, String member, long pid, short epoch) {
        return new ProducerRecord<>(
                transport.topic(),
                RolePartitioner.partitionFor(role, transport.partitionCount()),
                CoordinationCodec.encodeKey(CoordinationKey.lease(role)),
                CoordinationCodec.encodeValue(new CoordinationRecord.Lease(MemberId.of(member), pid, epoch, 1, 2)));
    }

    /**
     * The records of {@code role}'s partition from {@code fromOffset}, read until the read
     * has passed {@code throughOffset}. A commit returns once the transaction is decided;
     * on Kafka its markers are written after that, and until they are a read stops at the
     * transaction's first record (the last stable offset). So a test that reads what it
     * has just committed reads on to the end of the decided log, rather than once right after.
     */
    private static List<RawRecord> readThrough(
            CoordinationTransport transport, Role role, long fromOffset, long throughOffset) {
        List<RawRecord> read = new ArrayList<>();
        long[] next = {fromOffset};
        await("a read of role " + role + " through offset " + throughOffset)
                .atMost(Duration.ofSeconds(30))
                .until(() -> {
                    RoleRecords records = transport.read(role, next[0], Duration.ofMillis(200));
                    read.addAll(records.records());
                    next[0] = records.nextOffset();
                    return next[0] > throughOffset;
                });
        return read;
    }

    @Test
    void registrationsAreReadBackInOffsetOrderFromTheRolesPartition() {
        CoordinationTransport transport = transport();
        Role role = freshRole("order");
        long first = transport.register(role, MemberId.of("a"), 10);
        long second = transport.register(role, MemberId.of("b"), 20);
        assertThat(second).isGreaterThan(first);

        RoleRecords records = transport.read(role, first, Duration.ZERO);
        assertThat(records.records()).extracting(RawRecord::offset).startsWith(first, second);
        assertThat(records.nextOffset()).isGreaterThan(second);
        RawRecord registration = records.records().get(0);
        assertThat(CoordinationCodec.decodeKey(registration.key()))
                .isEqualTo(CoordinationKey.registration(role, MemberId.of("a")));
        assertThat(CoordinationCodec.decodeValue(RecordKind.REGISTRATION, registration.value()))
                .contains(new CoordinationRecord.Registration(MemberId.of("a"), 10));
    }

    @Test
    void readFromThePreviousPositionReturnsOnlyWhatIsNew() {
        CoordinationTransport transport = transport();
        Role role = freshRole("incremental");
        transport.register(role, MemberId.of("a"), 1);
        RoleRecords first = transport.read(role, 0, Duration.ZERO);
        long third = transport.register(role, MemberId.of("c"), 3);

        RoleRecords next = transport.read(role, first.nextOffset(), Duration.ZERO);
        assertThat(next.records()).extracting(RawRecord::offset).containsExactly(third);
        assertThat(transport.read(role, next.nextOffset(), Duration.ZERO).records())
                .isEmpty();
    }

    @Test
    void deregistrationIsATombstone() {
        CoordinationTransport transport = transport();
        Role role = freshRole("tombstone");
        long registered = transport.register(role, MemberId.of("a"), 1);
        transport.deregister(role, MemberId.of("a"));
        List<RawRecord> records =
                transport.read(role, registered, Duration.ZERO).records();
        assertThat(records).hasSize(2);
        assertThat(records.get(1).value()).isNull();
    }

    @Test
    void aWaitingReadReturnsWhenARecordIsCommitted() throws Exception {
        CoordinationTransport reader = transport();
        CoordinationTransport writer = transport();
        Role role = freshRole("wait");
        long start = reader.read(role, 0, Duration.ZERO).nextOffset();
        CompletableFuture<RoleRecords> waiting =
                CompletableFuture.supplyAsync(() -> reader.read(role, start, Duration.ofSeconds(30)));
        long written = writer.register(role, MemberId.of("late"), 5);
        // Whether the read began before or after the write, it must return the record.
        RoleRecords records = waiting.get(30, TimeUnit.SECONDS);
        assertThat(records.records()).extracting(RawRecord::offset).contains(written);
    }

    @Test
    void describeKnowsNoEpochOfARoleNeverTaken() {
        assertThat(transport().describeEpoch(freshRole("never"))).isEmpty();
    }

    @Test
    void readAllReadsEachPartitionFromItsOffsetAsReadDoes() {
        CoordinationTransport transport = transport();
        Role first = freshRole("all-first");
        Role second = freshRole("all-second");
        while (partitionOf(transport, second) == partitionOf(transport, first)) {
            second = freshRole("all-second");
        }
        long skipped = transport.register(first, MemberId.of("a"), 1);
        long wanted = transport.register(first, MemberId.of("b"), 2);
        long other = transport.register(second, MemberId.of("c"), 3);
        Map<Role, Long> from = new LinkedHashMap<>();
        from.put(first, skipped + 1);
        from.put(second, other);

        Map<Role, RoleRecords> read = transport.readAll(from);

        assertThat(read).containsOnlyKeys(first, second);
        assertThat(read.get(first).records()).extracting(RawRecord::offset).containsExactly(wanted);
        assertThat(read.get(first).nextOffset())
                .isEqualTo(transport.read(first, skipped + 1, Duration.ZERO).nextOffset());
        assertThat(read.get(second).records()).extracting(RawRecord::offset).containsExactly(other);
        assertThat(read.get(second).nextOffset()).isGreaterThan(other);
        // Read to the end: nothing more, and a plain read of the same partition still works.
        assertThat(transport
                        .readAll(Map.of(first, read.get(first).nextOffset()))
                        .get(first)
                        .records())
                .isEmpty();
        assertThat(transport.read(second, other, Duration.ZERO).records())
                .extracting(RawRecord::offset)
                .containsExactly(other);
        assertThat(transport.readAll(Map.of())).isEmpty();
    }

    private static int partitionOf(CoordinationTransport transport, Role role) {
        return RolePartitioner.partitionFor(role, transport.partitionCount());
    }

    @Test
    void describeEpochsReportsEveryRoleAsDescribeEpochDoesOne() {
        CoordinationTransport transport = transport();
        Role taken = freshRole("many-taken");
        Role alsoTaken = freshRole("many-also");
        Role never = freshRole("many-never");
        transport.initEpoch(taken);
        transport.initEpoch(alsoTaken);
        Map<Role, Optional<ProducerState>> described =
                transport.describeEpochs(List.of(taken, never, alsoTaken, taken));
        assertThat(described).containsOnlyKeys(taken, never, alsoTaken);
        assertThat(described.get(taken))
                .isEqualTo(transport.describeEpoch(taken))
                .isPresent();
        assertThat(described.get(alsoTaken))
                .isEqualTo(transport.describeEpoch(alsoTaken))
                .isPresent();
        assertThat(described.get(never)).isEmpty();
        assertThat(transport.describeEpochs(List.of())).isEmpty();
    }

    @Test
    void transactionIsVisibleAfterCommitAndPinnedToTheRolesPartition() {
        CoordinationTransport transport = transport();
        Role role = freshRole("txn");
        RoleEpoch epoch = transport.initEpoch(role);
        ProducerState state = transport.describeEpoch(role).orElseThrow();
        List<RecordMetadata> written =
                epoch.transact(List.of(lease(transport, role, "a", state.producerId(), state.producerEpoch())));
        assertThat(written).hasSize(1);
        assertThat(written.get(0).partition())
                .isEqualTo(RolePartitioner.partitionFor(role, transport.partitionCount()));
        long offset = written.get(0).offset();
        assertThat(readThrough(transport, role, offset, offset))
                .extracting(RawRecord::offset)
                .contains(offset);
    }

    @Test
    void initEpochFencesTheEarlierEpochOfAnotherMember() {
        Role role = freshRole("fence");
        CoordinationTransport first = transport();
        CoordinationTransport second = transport();
        RoleEpoch old = first.initEpoch(role);
        ProducerState before = first.describeEpoch(role).orElseThrow();
        RoleEpoch newer = second.initEpoch(role);
        ProducerState after = second.describeEpoch(role).orElseThrow();
        assertThat(after.producerEpoch()).isGreaterThan(before.producerEpoch());

        long end = first.read(role, 0, Duration.ZERO).nextOffset();
        assertThatThrownBy(() ->
                        old.transact(List.of(lease(first, role, "old", before.producerId(), before.producerEpoch()))))
                .isInstanceOf(FencedException.class);
        List<RecordMetadata> written =
                newer.transact(List.of(lease(second, role, "new", after.producerId(), after.producerEpoch())));
        assertThat(written).hasSize(1);
        // Nothing of the fenced transaction is visible, up to and with the newer epoch's record.
        byte[] leaseKey = CoordinationCodec.encodeKey(CoordinationKey.lease(role));
        List<RawRecord> leases = readThrough(first, role, end, written.get(0).offset()).stream()
                .filter(record -> java.util.Arrays.equals(record.key(), leaseKey))
                .toList();
        assertThat(leases).extracting(RawRecord::offset).contains(written.get(0).offset());
        assertThat(leases)
                .allSatisfy(record -> assertThat(CoordinationCodec.decodeValue(RecordKind.LEASE, record.value())
                                .orElseThrow()
                                .member()
                                .value())
                        .isEqualTo("new"));
    }

    @Test
    void underTransactionVersion2EveryCommitMovesTheEpochByOne() {
        setTransactionVersion((short) 2);
        assertEpochStepPerCommit(1);
    }

    @Test
    void underTransactionVersion1CommitsLeaveTheEpoch() {
        setTransactionVersion((short) 1);
        assertEpochStepPerCommit(0);
    }

    private void assertEpochStepPerCommit(int step) {
        CoordinationTransport transport = transport();
        Role role = freshRole("step");
        RoleEpoch epoch = transport.initEpoch(role);
        ProducerState initial = transport.describeEpoch(role).orElseThrow();
        for (int commit = 1; commit <= 3; commit++) {
            epoch.transact(List.of(lease(transport, role, "a", initial.producerId(), initial.producerEpoch())));
            ProducerState now = transport.describeEpoch(role).orElseThrow();
            assertThat(now.producerId()).isEqualTo(initial.producerId());
            assertThat(now.producerEpoch()).as("after commit %d", commit).isEqualTo((short)
                    (initial.producerEpoch() + commit * step));
        }
    }
}
