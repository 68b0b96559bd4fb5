package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * The cluster did not answer within the time allowed, or a member did not win a role
 * before its deadline. The message says which operation waited and for how long.
 *
 * <p>From a guarded write or send ({@code Leadership.write}, {@code Leadership.send}):
 * the cluster did not answer before the commit was sent (a send, or the input offsets),
 * so the transaction was aborted or can never commit: nothing of it was written, and
 * the leadership may still be alive, so the write may be tried again. A commit that
 * times out is not reported this way: it is sent again until the lease deadline, and if
 * its outcome is still unknown then, that is a {@link CommitOutcomeUnknownException}.
 */
public class CoordinationTimeoutException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    public CoordinationTimeoutException(String message) {
        super(message);
    }

    public CoordinationTimeoutException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
