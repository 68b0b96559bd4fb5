package io.krabka.streams.coordination;

import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.jspecify.annotations.Nullable;

/**
 * A guarded write's commit was sent, got no answer until the lease deadline, and the
 * library could not find out what became of it: the transaction <em>may have committed
 * or not</em>, and may still commit a moment later (a paused coordinator that resumes
 * processes the commit it holds). It is not a {@link FencedException}: do not conclude
 * that nothing was written, and do not conclude that it was.
 *
 * <p>The leadership that wrote it has ended ({@link LeadershipEndCause#FAILED}, or
 * {@code EXPIRED} if the deadline passed first): its producer cannot run another
 * transaction. Nothing says another member holds the role. A caller that must not
 * duplicate its records finds out by reading them back with {@code read_committed}
 * once the role's transaction coordinator answers again (a later leadership's write is
 * a safe point: it commits only after this transaction was decided).
 */
public class CommitOutcomeUnknownException extends CoordinationException {

    private static final long serialVersionUID = 1L;

    private final transient @Nullable List<RecordMetadata> acknowledged;

    public CommitOutcomeUnknownException(String message, @Nullable Throwable cause) {
        this(message, cause, null);
    }

    /**
     * @param acknowledged where the transaction's records were appended, in order, when
     *     every partition leader acknowledged them before the outcome became unknown;
     *     null otherwise
     */
    public CommitOutcomeUnknownException(
            String message, @Nullable Throwable cause, @Nullable List<RecordMetadata> acknowledged) {
        super(message, cause);
        this.acknowledged = acknowledged == null ? null : List.copyOf(acknowledged);
    }

    /**
     * Where the records were appended (offsets in their partitions), if every partition
     * leader acknowledged them: they are visible there if, and only if, the transaction
     * committed. Empty when not all were acknowledged.
     */
    public Optional<List<RecordMetadata>> acknowledged() {
        return Optional.ofNullable(acknowledged);
    }
}
