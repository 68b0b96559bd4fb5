package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.client.Contender;
import io.krabka.streams.coordination.succession.Decision;
import io.krabka.streams.coordination.succession.LeaseState;
import io.krabka.streams.coordination.succession.Sighted;
import io.krabka.streams.coordination.transport.RoleNews;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Where a {@link Contender} stands (like Kafka raft's {@code EpochState} classes). Its
 * passes, news, expiry timer, release and stop all read it; only the contender changes
 * it, on its lane ({@link RoleLane}), and only through the transitions below, each of which returns the
 * next state (the same one when the event does not apply there):
 *
 * <pre>
 *   Standby --granted--> Holding --ended--> Standby, or Paused when the work gave the role up
 *   Paused --rejoined (its instant passed)--> Standby
 *   Standby | Paused | Holding --stopping--> Leaving --leaveBegun--> Leaving(begun) --left--> Stopped
 * </pre>
 *
 * Each state owns its data: a Standby its last decision, a Holding state its
 * {@link Tenure}. A leadership granted or ended while leaving stays with, or leaves, the Leaving state:
 * leaving releases whatever is held when it begins. A contender that was never started
 * stays in Standby, Paused or Holding (a simulation steps it by hand).
 */
public sealed interface ContenderState {

    /** A standby that contends at once: it decided nothing yet, so its next pass reads. */
    ContenderState STANDBY = Standby.FRESH;

    /** The leadership held now, ended or not yet reported ended; null when none. */
    default @Nullable Tenure tenure() {
        return null;
    }

    /** Whether it still contends: neither leaving nor stopped. */
    default boolean contending() {
        return true;
    }

    /** {@code held} was granted. */
    default ContenderState granted(Tenure held) {
        throw new IllegalStateException("a grant in state " + this);
    }

    /** {@code held} ended and was reported; the member contends again, after {@code rejoinAtNanos} if that is not 0. */
    default ContenderState ended(Tenure held, long rejoinAtNanos) {
        return this;
    }

    /** The pause is over at {@code nowNanos}, if it is. */
    default ContenderState rejoined(long nowNanos) {
        return this;
    }

    /** Stop was asked for. */
    default ContenderState stopping() {
        return new Leaving(tenure(), false);
    }

    /**
     * Contending for the role: reads, waits for its turn, challenges. It owns what its last
     * read decided, so a pass that finds nothing new keeps that decision instead of reading.
     *
     * @param decision what the last read decided; null before the first
     * @param readAgainAt when to read the role again before the turn even with no news of it:
     *     to build its producer ahead of the turn, or where the spread order may have moved;
     *     null when neither is to come
     * @param anchor the lease that decision was anchored on; null for none
     * @param renewedUntil how far renewals of that leadership seen in the news since moved
     *     its deadline ({@link Sighted#NONE} for none)
     */
    record Standby(
            @Nullable Decision decision,
            @Nullable Instant readAgainAt,
            @Nullable LeaseState anchor,
            long renewedUntil) implements ContenderState {

        /** Nothing decided yet. */
        static final Standby FRESH = new Standby(null, null, null, Sighted.NONE);

        @Override
        public ContenderState granted(Tenure held) {
            return new Holding(held);
        }

        /** A read decided {@code decided}, to read again at {@code readAgain}, anchored on {@code lease}. */
        Standby decided(Decision decided, @Nullable Instant readAgain, @Nullable LeaseState lease) {
            return new Standby(decided, readAgain, lease, lease == null ? Sighted.NONE : lease.deadline());
        }

        /**
         * Whether {@code news} is a lease record renewing the leadership the last decision was
         * anchored on (same holder and grant time): then nothing in it is new but its deadline.
         */
        boolean renewsAnchor(RoleNews news) {
            return anchor != null
                    && news.lease()
                    && news.deadline() != RoleNews.UNKNOWN
                    && anchor.member().equals(news.member())
                    && anchor.grantedAt() == news.grantedAt();
        }

        /** Renewals in the news moved the anchor's deadline to {@code deadline} (never back). */
        Standby renewedTo(long deadline) {
            return deadline <= renewedUntil ? this : new Standby(decision, readAgainAt, anchor, deadline);
        }
    }

    /** Contends again only at {@code rejoinAtNanos}: the work just gave the role up, or failed. */
    record Paused(long rejoinAtNanos) implements ContenderState {

        @Override
        public ContenderState rejoined(long nowNanos) {
            return nowNanos - rejoinAtNanos < 0 ? this : STANDBY;
        }
    }

    /** Holds the role with {@code tenure}, and renews it. */
    record Holding(Tenure tenure) implements ContenderState {

        @Override
        public ContenderState ended(Tenure held, long rejoinAtNanos) {
            if (held != tenure) {
                return this;
            }
            return rejoinAtNanos != 0 ? new Paused(rejoinAtNanos) : STANDBY;
        }
    }

    /**
     * Stopped: passes no more, releases {@code tenure} if it holds one (null otherwise) and
     * leaves the roster once; {@code begun} once that leave began.
     */
    record Leaving(@Nullable Tenure tenure, boolean begun) implements ContenderState {

        @Override
        public boolean contending() {
            return false;
        }

        @Override
        public ContenderState granted(Tenure held) {
            // A pass under way when stop came: the leave releases it.
            return tenure == null ? new Leaving(held, begun) : ContenderState.super.granted(held);
        }

        @Override
        public ContenderState ended(Tenure held, long rejoinAtNanos) {
            return held == tenure ? new Leaving(null, begun) : this;
        }

        @Override
        public ContenderState stopping() {
            return this;
        }

        /** The leave begins. */
        ContenderState leaveBegun() {
            return new Leaving(tenure, true);
        }
    }

    /** Released, left the roster, passes no more. */
    record Stopped() implements ContenderState {

        @Override
        public boolean contending() {
            return false;
        }

        @Override
        public ContenderState stopping() {
            return this;
        }
    }
}
