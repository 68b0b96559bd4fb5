package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * A transient failure (a leader moved, a coordinator is loading, a transaction was
 * aborted by the coordinator): the operation may succeed if tried again. The
 * leadership, if any, is not known to have ended.
 *
 * <p>From a guarded write or send: the transaction failed before it committed and was
 * aborted, so nothing of it was written. A write retries these itself while the lease
 * lasts; one that reaches its caller came after the lease deadline passed.
 */
public class RetriableCoordinationException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    public RetriableCoordinationException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
