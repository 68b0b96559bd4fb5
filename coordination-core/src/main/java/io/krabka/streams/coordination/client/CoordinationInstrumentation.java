package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Wraps the operations that matter to a trace: a grant (InitProducerId and the grant
 * lease), a renewal, and a guarded write (one transaction, whatever it carries). The
 * Spring starter implements it with Micrometer's Observation API, so a guarded write
 * shows up as a span with its role and term; the core needs no tracing library.
 */
public interface CoordinationInstrumentation {

    /** What is being done. */
    enum Operation {
        /** Taking a role: InitProducerId and the grant's lease. */
        GRANT,
        /** A lease renewal with no records. */
        RENEW,
        /** A guarded write: records (and input offsets) in one transaction with a lease. */
        WRITE
    }

    /** Does nothing but the call. */
    CoordinationInstrumentation NONE = new CoordinationInstrumentation() {
        @Override
        public <T> T around(
                Operation operation, Role role, MemberId member, LongSupplier term, int records, Supplier<T> call) {
            return call.get();
        }
    };

    /**
     * Runs {@code call}, which does {@code operation}, and returns what it returns or
     * throws what it throws.
     *
     * @param term the leadership's term; read it after the call (a grant learns it)
     * @param records how many records the operation writes besides the lease
     */
    <T> T around(Operation operation, Role role, MemberId member, LongSupplier term, int records, Supplier<T> call);
}
