package io.krabka.coordination.cli;

/** A failure the tool reports as one line on stderr, with the exit code it ends with. */
final class CliException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int exitCode;

    CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /** A mistake in the command line: exit code {@value CoordinationCli#EXIT_USAGE}. */
    static CliException usage(String message) {
        return new CliException(CoordinationCli.EXIT_USAGE, message);
    }

    int exitCode() {
        return exitCode;
    }
}
