package io.krabka.streams.coordination.client;

/**
 * A role's work, run by the contender for each leadership: the counterpart of Curator's
 * {@code LeaderSelectorListener.takeLeadership}. Returning gives the role up with a
 * tombstone ({@link io.krabka.streams.coordination.LeadershipEndCause#RELEASED}); throwing
 * ends it as {@link io.krabka.streams.coordination.LeadershipEndCause#FAILED}; either way
 * the member contends again from the tail of the roster after a pause.
 *
 * <pre>{@code
 * Contender contender = Contender.running(client, Role.of("dispatcher"), MemberId.of("node-1"), leadership -> {
 *     while (!Thread.currentThread().isInterrupted()) {
 *         leadership.write(List.of(nextCommand()));   // fenced at once if this member was deposed
 *     }
 * });
 * contender.start();
 * }</pre>
 */
@FunctionalInterface
public interface LeaderWork {

    /**
     * Does the work while this member holds the role. When the leadership ends (fenced,
     * expired, released, stopped) the thread is interrupted: return soon after. Its guarded
     * writes already fail with {@link io.krabka.streams.coordination.FencedException} then.
     */
    void lead(Leadership leadership) throws Exception;
}
