package io.krabka.coordination.chaos.member;

import java.nio.charset.StandardCharsets;

/**
 * A command as committed to the command topic: who sent it, under which term, its
 * sequence number within that leadership, and when its transaction began (epoch ms,
 * taken before {@code beginTransaction}).
 */
public record Command(String member, long term, long seq, long began) {

    public static byte[] encode(String member, long term, long seq, long began) {
        return (member + " " + term + " " + seq + " " + began).getBytes(StandardCharsets.UTF_8);
    }

    /** Decodes a command; throws {@link IllegalArgumentException} naming the bytes when they are not one. */
    public static Command decode(byte[] value) {
        String text = new String(value, StandardCharsets.UTF_8);
        String[] parts = text.split(" ");
        if (parts.length != 4) {
            throw new IllegalArgumentException("not a command: " + text);
        }
        return new Command(parts[0], Long.parseLong(parts[1]), Long.parseLong(parts[2]), Long.parseLong(parts[3]));
    }
}
