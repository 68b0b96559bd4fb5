package io.krabka.coordination.chaos.member;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * A command as committed to the command topic: who sent it, under which term, its
 * sequence number within that leadership, and when its transaction began (epoch ms,
 * taken before {@code beginTransaction}).
 *
 * <p>A command the member's leader pipeline wrote for a request also carries the
 * request's id ({@code request}); it has no sequence number ({@link #PIPELINE_SEQ}), and
 * its {@code began} is when the pipeline's batch was processed, before its transaction.
 */
public record Command(String member, long term, long seq, long began, Optional<String> request) {

    /** The {@code seq} of a pipeline's command: it is identified by its request, not a sequence number. */
    public static final long PIPELINE_SEQ = -1;

    public Command {
        request.ifPresent(id -> {
            if (id.isEmpty() || id.contains(" ")) {
                throw new IllegalArgumentException("a request id is one non-empty word, not '" + id + "'");
            }
        });
    }

    /** A periodic command of the member's dispatch loop. */
    public static byte[] encode(String member, long term, long seq, long began) {
        return (member + " " + term + " " + seq + " " + began).getBytes(StandardCharsets.UTF_8);
    }

    /** The pipeline's command for the request {@code request} (one word). */
    public static byte[] encodeForRequest(String member, long term, long began, String request) {
        new Command(member, term, PIPELINE_SEQ, began, Optional.of(request)); // validates the id
        return (member + " " + term + " " + PIPELINE_SEQ + " " + began + " " + request)
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Decodes a command; throws {@link IllegalArgumentException} naming the bytes when they are not one. */
    public static Command decode(byte[] value) {
        String text = new String(value, StandardCharsets.UTF_8);
        String[] parts = text.split(" ");
        if (parts.length != 4 && parts.length != 5) {
            throw new IllegalArgumentException("not a command: " + text);
        }
        return new Command(
                parts[0],
                Long.parseLong(parts[1]),
                Long.parseLong(parts[2]),
                Long.parseLong(parts[3]),
                parts.length == 5 ? Optional.of(parts[4]) : Optional.empty());
    }
}
