package io.krabka.streams.coordination;

import org.jspecify.annotations.Nullable;

/**
 * A guarded send was refused because its leadership already had
 * {@link SendBatching#maxQueuedRecords()} records waiting for their transactions, and
 * no room freed within {@link SendBatching#maxBlock()} (Kafka's producer refuses a send
 * the same way when {@code buffer.memory} stays full for {@code max.block.ms}).
 *
 * <p>Nothing of the refused record was written or queued: it will never be written
 * unless it is sent again. The leadership is not known to have ended; the transactions
 * are only slower than the sends. Sending again later, or more slowly, may succeed.
 */
public class SendQueueFullException extends RetriableCoordinationException {

    private static final long serialVersionUID = 1L;

    public SendQueueFullException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
