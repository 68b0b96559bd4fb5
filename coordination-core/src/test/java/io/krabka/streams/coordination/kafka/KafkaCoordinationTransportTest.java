package io.krabka.streams.coordination.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.transport.RoleEpoch;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The role producers of the Kafka transport on Kafka's mock clients: which producer a
 * challenge uses, and when one is prepared for it. No broker: a mock producer's
 * InitProducerId only marks it initialised.
 */
class KafkaCoordinationTransportTest {

    private static final Role ROLE = Role.of("controller");

    /** Every role producer the transport had built, in order. */
    private final List<MockProducer<byte[], byte[]>> built = new CopyOnWriteArrayList<>();

    private static MockProducer<byte[], byte[]> producer() {
        return new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private KafkaCoordinationTransport transport(
            java.util.function.Supplier<MockProducer<byte[], byte[]>> roleProducers) {
        Admin admin = (Admin) Proxy.newProxyInstance(
                Admin.class.getClassLoader(), new Class<?>[] {Admin.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    throw new UnsupportedOperationException("no cluster here: " + method.getName());
                });
        return new KafkaCoordinationTransport(
                admin,
                producer(),
                role -> {
                    MockProducer<byte[], byte[]> producer = roleProducers.get();
                    built.add(producer);
                    return producer;
                },
                new MockConsumer<>("earliest"));
    }

    @Test
    void aRoleIsPreparedAgainOnceThisMembersEpochOfItClosed() {
        try (KafkaCoordinationTransport transport = transport(KafkaCoordinationTransportTest::producer)) {
            transport.prepareEpoch(ROLE);
            RoleEpoch first = transport.initEpoch(ROLE);
            assertThat(built)
                    .as("the first challenge used the producer prepared for it")
                    .hasSize(1);
            assertThat(built.get(0).transactionInitialized()).isTrue();
            transport.prepareEpoch(ROLE);
            assertThat(built)
                    .as("nothing is prepared while this member holds the epoch")
                    .hasSize(1);

            // The tenure ends (a release, an expiry, a fence), and this member is next in line again.
            first.close();
            transport.prepareEpoch(ROLE);

            assertThat(built).as("a producer prepared for the second challenge").hasSize(2);
            assertThat(built.get(1).transactionInitialized())
                    .as("prepared, without InitProducerId")
                    .isFalse();
            transport.initEpoch(ROLE);
            assertThat(built)
                    .as("the second challenge used the producer prepared for it")
                    .hasSize(2);
            assertThat(built.get(1).transactionInitialized()).isTrue();
        }
    }

    @Test
    void aDiscardedPreparationClosesItsProducerAndLeavesAHeldEpochAlone() {
        try (KafkaCoordinationTransport transport = transport(KafkaCoordinationTransportTest::producer)) {
            transport.prepareEpoch(ROLE);
            assertThat(built).hasSize(1);

            transport.discardPrepared(ROLE);

            assertThat(built.get(0).closed())
                    .as("the producer built ahead is closed")
                    .isTrue();
            RoleEpoch held = transport.initEpoch(ROLE);
            assertThat(built).as("the challenge built a producer of its own").hasSize(2);
            transport.discardPrepared(ROLE);
            assertThat(held.usable()).as("a held epoch is not a preparation").isTrue();
            assertThat(built.get(1).closed()).isFalse();
        }
    }

    /**
     * A tenure that ends while the member challenges again (the leadership closes its
     * epoch as the next InitProducerId runs) must not take the new epoch's place with it:
     * nothing is prepared while the new epoch is held.
     */
    @Test
    void anEpochThatFinishesClosingAfterTheNextOneWasInitialisedLeavesTheNextOneHeld() throws Exception {
        CountDownLatch closing = new CountDownLatch(1);
        CountDownLatch mayFinish = new CountDownLatch(1);
        MockProducer<byte[], byte[]> slowToClose =
                new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer()) {
                    @Override
                    public void close(Duration timeout) {
                        closing.countDown();
                        try {
                            mayFinish.await(10, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        super.close(timeout);
                    }
                };
        List<MockProducer<byte[], byte[]>> next = new CopyOnWriteArrayList<>(List.of(slowToClose));
        try (KafkaCoordinationTransport transport = transport(() -> next.isEmpty() ? producer() : next.remove(0))) {
            RoleEpoch ending = transport.initEpoch(ROLE);
            CompletableFuture<Void> end = CompletableFuture.runAsync(ending::close);
            assertThat(closing.await(10, TimeUnit.SECONDS)).isTrue();

            RoleEpoch again = transport.initEpoch(ROLE);
            mayFinish.countDown();
            end.get(10, TimeUnit.SECONDS);
            transport.prepareEpoch(ROLE);

            assertThat(again.usable()).isTrue();
            assertThat(built).as("nothing prepared while the new epoch is held").hasSize(2);
        }
    }
}
