package io.krabka.coordination.chaos.harness;

import io.krabka.coordination.chaos.member.CommandMember;
import io.krabka.coordination.chaos.springmember.SpringMember;
import io.krabka.streams.coordination.kafka.ChildJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A member JVM: a {@link SpringMember} (the starter, as users run it), or for the
 * deliberately broken unfenced mode a {@link CommandMember} on the core. Its output file
 * collects the lines of every life it had.
 */
final class MemberProcess {

    private final String id;
    private final boolean spring;
    private final List<String> arguments;
    private final Path output;
    private Process process;

    MemberProcess(String id, boolean spring, List<String> arguments, Path output) {
        this.id = id;
        this.spring = spring;
        this.arguments = List.copyOf(arguments);
        this.output = output;
    }

    String id() {
        return id;
    }

    Path output() {
        return output;
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    void start() {
        process = ChildJvm.start(
                (spring ? SpringMember.class : CommandMember.class).getName(),
                List.of(
                        "-Xms64m",
                        "-Xmx192m",
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-Dorg.springframework.boot.logging.LoggingSystem=none",
                        // -Dchaos.balance=spread runs a plan with the Spring members spreading their roles.
                        "-Dkrabka.coordination.balance=" + System.getProperty("chaos.balance", "none"),
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                        "-Dorg.slf4j.simpleLogger.log.io.krabka=" + System.getProperty("chaos.member.log", "info"),
                        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.producer.internals.TransactionManager="
                                + System.getProperty("chaos.member.log", "warn")),
                arguments,
                output);
    }

    void kill() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** SIGTERM and waits for the JVM to exit: a Spring member shuts down and releases its roles. */
    boolean terminate(long timeoutMillis) {
        process.destroy();
        try {
            return process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    void pause() {
        ChildJvm.signal(process.pid(), "STOP");
    }

    void resume() {
        ChildJvm.signal(process.pid(), "CONT");
    }
}
