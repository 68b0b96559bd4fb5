/**
 * The read-only command-line tool: {@code list}, {@code describe} and {@code doctor} over a
 * coordination topic ({@link CoordinationCli}). A program, not a library.
 */
package io.krabka.coordination.cli;
