package io.krabka.streams.coordination.compat;

import io.krabka.streams.coordination.kafka.KafkaProcessCluster;
import io.krabka.streams.coordination.kafka.KafkaTestCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * A Kafka release whose brokers the compatibility tests run: real broker JVMs on that
 * release's {@code kafka_2.13} and its own runtime dependencies (resolved by the module
 * {@code compat/brokers/kafka-VERSION}), while the clients stay the project's.
 *
 * <p>Which releases run comes from the system property {@code krabka.compat.brokers}
 * (comma-separated; the build sets it: the newest release by default, every release with
 * {@code -Pcompat}).
 */
public record KafkaRelease(String version, String classPath) {

    /** Where the class path files are: {@code <dir>/kafka-VERSION/target/broker.classpath}. */
    private static final Path CLASSPATHS = Path.of(System.getProperty("krabka.compat.classpaths", "../compat/brokers"));

    /** The releases this run covers. */
    public static List<String> versions() {
        return Arrays.stream(
                        System.getProperty("krabka.compat.brokers", "4.4.0").split(","))
                .map(String::trim)
                .filter(v -> !v.isEmpty())
                .toList();
    }

    /** One argument set (version) a release. */
    public static Stream<Arguments> releases() {
        return versions().stream().map(Arguments::of);
    }

    /** One argument set (version, transaction version) for each transaction version a release finalizes. */
    public static Stream<Arguments> releasesAndTransactionVersions() {
        return versions().stream().flatMap(v -> transactionVersions(v).stream().map(tv -> Arguments.of(v, tv)));
    }

    /**
     * The {@code transaction.version} levels a release can finalize: Kafka 3.9 has level 0
     * only (level 1 and 2 need metadata version 4.0-IV0, not production there); 4.x has 1
     * and 2 (2 being the default of a new cluster).
     */
    public static List<Short> transactionVersions(String version) {
        return version.startsWith("3.") ? List.of((short) 0) : List.of((short) 1, (short) 2);
    }

    /** The release of {@code version}, with the class path its module wrote. */
    public static KafkaRelease of(String version) {
        Path file = CLASSPATHS.resolve("kafka-" + version).resolve("target").resolve("broker.classpath");
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException(
                    "No class path for Kafka " + version + " brokers at " + file.toAbsolutePath()
                            + ". The root build writes it before this module's tests; alone:"
                            + " ./mvnw -B -Pcompat -f compat/brokers/pom.xml verify");
        }
        try {
            return new KafkaRelease(version, Files.readString(file).trim());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The highest {@code transaction.version} the release supports. */
    public short maxTransactionVersion() {
        List<Short> levels = transactionVersions(version);
        return levels.get(levels.size() - 1);
    }

    /**
     * Starts a one-node KRaft cluster (combined controller and broker) of this release in
     * {@code target/compat/<name>/kafka-VERSION}, which is emptied first and kept afterwards
     * for the brokers' logs ({@code node-1/server.out}).
     */
    public KafkaTestCluster start(String name, Map<String, String> brokerSettings) {
        Path dir = Path.of("target", "compat", name, "kafka-" + version).toAbsolutePath();
        deleteRecursively(dir);
        KafkaProcessCluster cluster = KafkaProcessCluster.builder(dir)
                .classPath(classPath)
                .settings(brokerSettings)
                .start();
        // Evidence of what runs: the storage tool of the release names the metadata version it formatted.
        System.out.printf(
                "%s broker up in %s: %s%n",
                this, dir, formattedMetadataVersion(dir.resolve("node-1").resolve("format.out")));
        return KafkaTestCluster.wrap(cluster.bootstrapServers(), cluster);
    }

    private static String formattedMetadataVersion(Path formatOutput) {
        try {
            Matcher matcher = Pattern.compile("metadata\\.version (\\S+?)\\.?$", Pattern.MULTILINE)
                    .matcher(Files.readString(formatOutput));
            return matcher.find() ? "metadata.version " + matcher.group(1) : "no metadata.version in " + formatOutput;
        } catch (IOException e) {
            return "no " + formatOutput;
        }
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "Kafka " + version;
    }
}
