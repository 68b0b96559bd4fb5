package io.krabka.streams.coordination.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A contender's serial lane: one event at a time, in order, none lost, none fatal, continuations off the lane. */
class RoleLaneTest {

    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final RoleLane lane = new RoleLane(failures::add);

    @Test
    void eventsPostedFromManyThreadsNeverRunAtOnceAndNoneIsLost() throws InterruptedException {
        int threads = 8;
        int perThread = 20_000;
        AtomicBoolean inside = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        int[] counter = {0}; // deliberately not atomic: the lane is its only writer
        int[][] lastSeen = new int[threads][1];
        AtomicInteger outOfOrder = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> posters = new ArrayList<>();
        for (int p = 0; p < threads; p++) {
            int poster = p;
            Thread thread = new Thread(() -> {
                awaitQuietly(go);
                for (int i = 1; i <= perThread; i++) {
                    int sequence = i;
                    lane.run(() -> {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        counter[0]++;
                        if (lastSeen[poster][0] != sequence - 1) {
                            outOfOrder.incrementAndGet();
                        }
                        lastSeen[poster][0] = sequence;
                        inside.set(false);
                    });
                }
            });
            posters.add(thread);
            thread.start();
        }
        go.countDown();
        for (Thread thread : posters) {
            thread.join(TimeUnit.MINUTES.toMillis(1));
            assertThat(thread.isAlive())
                    .as("a poster still running after a minute")
                    .isFalse();
        }

        assertThat(overlaps).as("events that ran while another ran").hasValue(0);
        assertThat(outOfOrder).as("events of one poster that ran out of order").hasValue(0);
        assertThat(counter[0]).isEqualTo(threads * perThread);
        assertThat(failures).isEmpty();
    }

    @Test
    void anEventPostedFromAnEventRunsInsideIt() {
        List<String> order = new ArrayList<>();
        lane.run(() -> {
            order.add("outer begins");
            lane.run(() -> order.add("inner"));
            order.add("outer ends");
        });

        assertThat(order).containsExactly("outer begins", "inner", "outer ends");
    }

    @Test
    void aThrowableOfAnyKindIsContainedAndTheLaneGoesOn() {
        AssertionError error = new AssertionError("a listener's Error");
        List<String> ran = new ArrayList<>();

        lane.run(() -> {
            throw error;
        });
        lane.run(() -> ran.add("next"));

        assertThat(failures).containsExactly(error);
        assertThat(ran).containsExactly("next");
    }

    @Test
    void aContinuationRunsOnTheAskingThreadWhenTheEventRanThere() {
        List<Runnable> elsewhere = new ArrayList<>();
        Thread[] ranOn = {null};

        lane.runThen(() -> () -> ranOn[0] = Thread.currentThread(), elsewhere::add);

        assertThat(ranOn[0]).isSameAs(Thread.currentThread());
        assertThat(elsewhere).isEmpty();
    }

    @Test
    void aContinuationOfAnEventThatAnotherThreadRanGoesElsewhereAndNeverRunsOnTheLane() throws InterruptedException {
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread occupant = new Thread(() -> lane.run(() -> {
            // Holds the lane so that the next event must wait for this thread to run it.
            holding.countDown();
            awaitQuietly(release);
        }));
        occupant.start();
        assertThat(holding.await(1, TimeUnit.MINUTES)).isTrue();
        List<Runnable> elsewhere = new CopyOnWriteArrayList<>();
        AtomicBoolean continued = new AtomicBoolean();

        lane.runThen(() -> () -> continued.set(true), elsewhere::add);
        assertThat(elsewhere).as("queued behind the occupant: not run yet").isEmpty();
        release.countDown();
        occupant.join(TimeUnit.MINUTES.toMillis(1));

        assertThat(elsewhere)
                .as("handed to the other executor by the thread that ran the event")
                .hasSize(1);
        assertThat(continued).as("never run on the lane").isFalse();
        elsewhere.get(0).run();
        assertThat(continued).isTrue();
    }

    @Test
    void anEventThatAnswersNothingContinuesNowhere() {
        List<Runnable> elsewhere = new ArrayList<>();

        lane.runThen(() -> null, elsewhere::add);

        assertThat(elsewhere).isEmpty();
        assertThat(failures).isEmpty();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
