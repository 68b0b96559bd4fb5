package io.krabka.streams.coordination;

import java.time.Instant;
import java.util.Objects;

/**
 * The newest lease record of a role, as a reader of the coordination topic sees it.
 *
 * @param holder the member the lease names
 * @param token the term of the leadership and the (producer id, epoch) the lease record
 *     carries; compare it with what the transaction coordinator reports to know whether
 *     the holder still holds the epoch
 * @param grantedAt when the leadership began, on the holder's clock
 * @param deadline until when the holder claims the role, on the holder's clock
 */
public record LeaseSnapshot(MemberId holder, FencingToken token, Instant grantedAt, Instant deadline) {

    public LeaseSnapshot {
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(grantedAt, "grantedAt");
        Objects.requireNonNull(deadline, "deadline");
    }
}
