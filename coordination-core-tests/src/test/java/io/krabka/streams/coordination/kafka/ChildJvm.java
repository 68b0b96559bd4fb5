package io.krabka.streams.coordination.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A main class of this test class path in a JVM of its own, for tests whose faults must
 * hit a real process: SIGKILL, SIGSTOP and SIGCONT of brokers and members.
 */
public final class ChildJvm {

    private ChildJvm() {}

    /** Starts {@code mainClass} with this JVM's class path; its output is appended to {@code output}. */
    public static Process start(String mainClass, List<String> jvmOptions, List<String> args, Path output) {
        return start(System.getProperty("java.class.path"), mainClass, jvmOptions, args, output);
    }

    /**
     * Starts {@code mainClass} on another class path (a broker of another Kafka version,
     * say); its output is appended to {@code output}.
     */
    public static Process start(
            String classPath, String mainClass, List<String> jvmOptions, List<String> args, Path output) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, mainClass));
        command.addAll(args);
        try {
            Files.createDirectories(output.toAbsolutePath().getParent());
            return new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start " + mainClass, e);
        }
    }

    /** Sends a POSIX signal by name ({@code STOP}, {@code CONT}) with {@code kill}: the JDK can only TERM and KILL a process. */
    public static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .inheritIO()
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
