package io.krabka.streams.coordination.succession;

import static org.assertj.core.api.Assertions.assertThat;

import io.krabka.streams.coordination.MemberId;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A lease record's declared duration, for honest and for extreme times. */
class LeaseStateTest {

    private static LeaseState lease(long writtenAt, long deadline) {
        return new LeaseState(MemberId.of("a"), 1, (short) 0, writtenAt, deadline, 0, 0, List.of(), writtenAt);
    }

    @Test
    void anHonestLeaseDeclaresItsDuration() {
        assertThat(lease(1_700_000_000_000L, 1_700_000_030_000L).declaredDurationMillis())
                .isEqualTo(30_000);
    }

    /** A deadline of Long.MIN_VALUE wrapped around to a large positive duration, which passed the bounds' non-positive check. */
    @Test
    void extremeTimesSaturateInsteadOfWrappingAround() {
        assertThat(lease(1_700_000_000_000L, Long.MIN_VALUE).declaredDurationMillis())
                .isEqualTo(Long.MIN_VALUE);
        assertThat(lease(-1_700_000_000_000L, Long.MAX_VALUE).declaredDurationMillis())
                .isEqualTo(Long.MAX_VALUE);
        assertThat(lease(Long.MIN_VALUE, Long.MAX_VALUE).declaredDurationMillis())
                .isEqualTo(Long.MAX_VALUE);
        assertThat(lease(Long.MAX_VALUE, Long.MIN_VALUE).declaredDurationMillis())
                .isEqualTo(Long.MIN_VALUE);
        assertThat(lease(0, Long.MIN_VALUE).declaredDurationMillis()).isEqualTo(Long.MIN_VALUE);
    }
}
