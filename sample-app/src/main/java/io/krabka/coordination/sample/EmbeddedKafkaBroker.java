package io.krabka.coordination.sample;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A single-node KRaft broker (broker and controller in one process) in this JVM, on a
 * fixed client port, with the replication settings a one-broker cluster needs for
 * transactions. Its data lives in a temporary directory that {@link #close()} deletes.
 *
 * <p>For the demo only. The same setup as {@code kafka-storage.sh format} followed by
 * {@code kafka-server-start.sh}, minus the scripts.
 */
final class EmbeddedKafkaBroker implements AutoCloseable {

    private static final String BROKER_LISTENER = "PLAINTEXT";
    private static final String CONTROLLER_LISTENER = "CONTROLLER";

    private final KafkaRaftServer server;
    private final Path directory;
    private final String bootstrapServers;

    private EmbeddedKafkaBroker(KafkaRaftServer server, Path directory, String bootstrapServers) {
        this.server = server;
        this.directory = directory;
        this.bootstrapServers = bootstrapServers;
    }

    /**
     * Formats a fresh log directory and starts the broker; returns once it serves clients.
     *
     * @param host the address both listeners bind to and the broker advertises
     * @param port the client port; the controller takes a free port of its own
     */
    static EmbeddedKafkaBroker start(String host, int port) {
        Path directory;
        try {
            directory = Files.createTempDirectory("krabka-sample-kafka-");
        } catch (IOException e) {
            throw new UncheckedIOException("could not create the embedded broker's log directory", e);
        }
        try {
            int controllerPort = freePort(host);
            String logDir = directory.resolve("log").toString();
            Map<String, String> settings = new HashMap<>();
            settings.put("process.roles", "broker,controller");
            settings.put("node.id", "1");
            settings.put("controller.quorum.voters", "1@" + host + ":" + controllerPort);
            settings.put(
                    "listeners",
                    BROKER_LISTENER + "://" + host + ":" + port + "," + CONTROLLER_LISTENER + "://" + host + ":"
                            + controllerPort);
            settings.put("advertised.listeners", BROKER_LISTENER + "://" + host + ":" + port);
            settings.put(
                    "listener.security.protocol.map",
                    BROKER_LISTENER + ":PLAINTEXT," + CONTROLLER_LISTENER + ":PLAINTEXT");
            settings.put("controller.listener.names", CONTROLLER_LISTENER);
            settings.put("inter.broker.listener.name", BROKER_LISTENER);
            settings.put("log.dirs", logDir);
            // One broker: every internal topic gets one replica, or initTransactions times out.
            settings.put("offsets.topic.replication.factor", "1");
            settings.put("offsets.topic.num.partitions", "1");
            settings.put("transaction.state.log.replication.factor", "1");
            settings.put("transaction.state.log.min.isr", "1");
            settings.put("transaction.state.log.num.partitions", "1");
            settings.put("share.coordinator.state.topic.replication.factor", "1");
            settings.put("share.coordinator.state.topic.min.isr", "1");
            settings.put("group.initial.rebalance.delay.ms", "0");
            settings.put("num.partitions", "1");
            // Each start formats a fresh cluster: a member of the old one still running would make
            // the broker create the coordination topic with these defaults (OPERATIONS.md). The
            // sample creates its own topics.
            settings.put("auto.create.topics.enable", "false");
            KafkaConfig config = new KafkaConfig(settings);

            // Production metadata version and its default features (transaction.version 2).
            new Formatter()
                    .setPrintStream(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8))
                    .setNodeId(1)
                    .setClusterId(Uuid.randomUuid().toString())
                    .setControllerListenerName(CONTROLLER_LISTENER)
                    .setMetadataLogDirectory(config.metadataLogDir())
                    .setDirectories(List.of(logDir))
                    .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
                    .run();

            KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
            // Returns once the broker has caught up with the metadata log and is unfenced.
            server.startup();
            return new EmbeddedKafkaBroker(server, directory, host + ":" + port);
        } catch (Exception e) {
            delete(directory);
            throw new IllegalStateException(
                    "could not start the embedded Kafka broker on " + host + ":" + port
                            + " (is the port taken? set sample.broker.port, or give spring.kafka.bootstrap-servers)",
                    e);
        }
    }

    /** The address clients connect to. */
    String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public void close() {
        try {
            server.shutdown();
            server.awaitShutdown();
        } finally {
            delete(directory);
        }
    }

    private static int freePort(String host) throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(host), 0));
            return socket.getLocalPort();
        }
    }

    private static void delete(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // A temporary directory: the OS cleans up what is left.
        }
    }
}
