package io.krabka.streams.coordination.autoconfigure;

import java.util.Arrays;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The starter builds its Kafka clients from the settings of the application's Spring Kafka
 * factories, and there is no one factory of a kind to take them from: none, or several
 * with none {@code @Primary} (one per value type is a common setup). Before, such an
 * application failed with "consider defining a bean of type CoordinationTransport", which
 * named neither. {@link CoordinationFailureAnalyzer} turns this into the fix.
 */
final class AmbiguousKafkaFactoriesException extends IllegalStateException {

    private final String kind;
    private final String[] names;

    private AmbiguousKafkaFactoriesException(String kind, String[] names) {
        super(
                names.length == 0
                        ? "krabka coordination builds its Kafka clients from the settings of the application's " + kind
                                + ", and the context has none"
                        : "krabka coordination builds its Kafka clients from the settings of the application's " + kind
                                + ", and the context has " + names.length + " (" + String.join(", ", names)
                                + ") with none @Primary");
        this.kind = kind;
        this.names = names.clone();
    }

    /** The one {@code type} bean (or the {@code @Primary} one); fails naming the candidates when there is no such bean. */
    static <T> T unique(ObjectProvider<T> candidates, Class<?> type, ListableBeanFactory beans) {
        T unique = candidates.getIfUnique();
        if (unique == null) {
            throw new AmbiguousKafkaFactoriesException(type.getSimpleName(), beans.getBeanNamesForType(type));
        }
        return unique;
    }

    /** What to do about it. */
    String action() {
        return names.length == 0
                ? "Let Spring Boot's Kafka auto-configuration create a " + kind + " (spring-kafka on the class path,"
                        + " KafkaAutoConfiguration not excluded), or define a CoordinationTransport bean"
                        + " (KafkaCoordinationTransport.create) with the connection settings to use."
                : "Mark the " + kind + " whose connection and security settings the coordination should use"
                        + " @Primary (one of " + Arrays.toString(names) + "), or define a CoordinationTransport bean"
                        + " (KafkaCoordinationTransport.create) with the settings to use.";
    }
}
