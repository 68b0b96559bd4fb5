package io.krabka.streams.coordination.actuate;

import io.krabka.streams.coordination.MemberId;
import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.CoordinationInstrumentation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Grants, renewals and guarded writes as Micrometer observations, so traces show a
 * guarded write as a span ({@code krabka.coordination.write}) with its role and term, next
 * to the meters. Low-cardinality keys: {@code krabka.role}, {@code krabka.member}; high:
 * {@code krabka.term}, {@code krabka.records}. A failed operation records its exception.
 */
public final class ObservationInstrumentation implements CoordinationInstrumentation {

    private final ObservationRegistry registry;

    public ObservationInstrumentation(ObservationRegistry registry) {
        this.registry = registry;
    }

    @Override
    public <T> T around(
            Operation operation, Role role, MemberId member, LongSupplier term, int records, Supplier<T> call) {
        String name = "krabka.coordination." + operation.name().toLowerCase(Locale.ROOT);
        Observation observation = Observation.createNotStarted(name, registry)
                .contextualName(operation.name().toLowerCase(Locale.ROOT) + " " + role.name())
                .lowCardinalityKeyValue("krabka.role", role.name())
                .lowCardinalityKeyValue("krabka.member", member.value())
                .highCardinalityKeyValue("krabka.records", Integer.toString(records))
                .start();
        Observation.Scope scope = observation.openScope();
        try {
            return call.get();
        } catch (RuntimeException e) {
            observation.error(e);
            throw e;
        } finally {
            scope.close();
            observation.highCardinalityKeyValue("krabka.term", Long.toString(term.getAsLong()));
            observation.stop();
        }
    }
}
