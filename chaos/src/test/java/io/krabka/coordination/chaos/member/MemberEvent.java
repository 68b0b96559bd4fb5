package io.krabka.coordination.chaos.member;

import java.util.HashMap;
import java.util.Map;

/**
 * The lines a member JVM writes ({@code SpringMember}, or {@link CommandMember}), one per step:
 * {@code EVENT at=<epoch ms> member=<id> key=value ...}.
 */
public enum MemberEvent {
    /** The JVM is up ({@code pid}). */
    START,
    /** The member won a role ({@code role term producerId epoch}; a CommandMember writes no role: the dispatcher). */
    GRANTED,
    /** A command's commit was acknowledged ({@code role term seq began offset}). */
    ACK,
    /** A committed command was sent to the device ({@code term seq answer}). */
    DISPATCH,
    /** A leadership ended ({@code role term cause}). */
    LOST,
    /**
     * The member's leader pipeline started or stopped under a leadership ({@code term state},
     * and when it stopped {@code processed batches}: the member's running totals).
     */
    PIPELINE,
    /** The member's running count of skipped malformed records ({@code count}). */
    MALFORMED,
    /** The member's running count of records it found suspicious: forged or absurd leases and tombstones ({@code count}). */
    SUSPICIOUS,
    /** The harness asked the member to release the dispatcher role ({@code role released}). */
    RELEASE,
    /** A failure the member survived ({@code detail}). */
    ERROR;

    /** One parsed line. */
    public record Line(MemberEvent event, long at, String member, Map<String, String> fields) {

        public long number(String key) {
            String value = fields.get(key);
            if (value == null) {
                throw new IllegalArgumentException(event + " line has no " + key + ": " + fields);
            }
            return Long.parseLong(value);
        }
    }

    /** Parses a line; anything else a JVM may print (a stack trace, a JVM warning) gives null. */
    public static Line parse(String line) {
        String[] words = line.split(" ");
        MemberEvent event;
        try {
            event = valueOf(words[0]);
        } catch (IllegalArgumentException notAnEvent) {
            return null;
        }
        Map<String, String> fields = new HashMap<>();
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq > 0) {
                fields.put(words[i].substring(0, eq), words[i].substring(eq + 1));
            }
        }
        if (!fields.containsKey("at") || !fields.containsKey("member")) {
            return null;
        }
        return new Line(event, Long.parseLong(fields.get("at")), fields.get("member"), fields);
    }
}
