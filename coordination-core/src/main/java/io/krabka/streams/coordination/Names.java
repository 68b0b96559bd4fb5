package io.krabka.streams.coordination;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import org.jspecify.annotations.Nullable;

/**
 * The one rule for the names this module writes to Kafka: role names (which become
 * {@code transactional.id}s) and member ids. Both travel in the frozen i16-length
 * string layout, so the rule is about UTF-8 bytes, not Java chars. A name is non-blank,
 * in Unicode normalization form C, and has no ISO control character, no unpaired
 * surrogate and no format character (Unicode category Cf): names that look alike are
 * the same name.
 */
final class Names {

    private Names() {}

    /**
     * Returns why {@code value} is not a valid name of at most {@code maxBytes} UTF-8
     * bytes, or {@code null} when it is valid.
     */
    static @Nullable String problem(String value, int maxBytes) {
        if (value == null) {
            return "must not be null";
        }
        if (value.isBlank()) {
            return "must not be empty or blank";
        }
        for (int i = 0; i < value.length(); ) {
            int codePoint = value.codePointAt(i);
            if (Character.isISOControl(codePoint)) {
                return "must not contain the control character U+%04X at index %d".formatted(codePoint, i);
            }
            // A lone surrogate has no UTF-8 encoding: getBytes would silently turn it into '?'.
            if (Character.getType(codePoint) == Character.SURROGATE) {
                return "must not contain the unpaired surrogate U+%04X at index %d".formatted(codePoint, i);
            }
            // Zero-width and bidi controls, byte order marks, soft hyphens: two names that
            // differ only in these look identical in logs and dashboards, yet fence nothing
            // of each other.
            if (Character.getType(codePoint) == Character.FORMAT) {
                return "must not contain the invisible format character U+%04X at index %d".formatted(codePoint, i);
            }
            i += Character.charCount(codePoint);
        }
        // ASCII text is always in NFC (nothing in it composes): the check below was about a
        // tenth of the CPU of decoding a record, where every key's names are validated again.
        if (!isAscii(value) && !Normalizer.isNormalized(value, Normalizer.Form.NFC)) {
            String normalized = Normalizer.normalize(value, Normalizer.Form.NFC);
            int at = 0;
            while (at < normalized.length() && value.charAt(at) == normalized.charAt(at)) {
                at++;
            }
            return ("must be in Unicode normalization form C (NFC), so that names that look alike are one name: "
                            + "from index %d it has %s where NFC has %s")
                    .formatted(at, codePoints(value, at), codePoints(normalized, at));
        }
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxBytes) {
            return "must be at most %d UTF-8 bytes, but is %d".formatted(maxBytes, bytes);
        }
        return null;
    }

    private static boolean isAscii(String value) {
        for (int i = 0; i < value.length(); i++) {
            if (value.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    /** Up to three code points of {@code text} from {@code index}, as U+XXXX. */
    private static String codePoints(String text, int index) {
        return text.substring(index)
                .codePoints()
                .limit(3)
                .mapToObj("U+%04X"::formatted)
                .collect(java.util.stream.Collectors.joining(" "));
    }

    static String require(String what, String value, int maxBytes) {
        String problem = problem(value, maxBytes);
        if (problem != null) {
            throw new IllegalArgumentException("invalid " + what + " " + quote(value) + ": " + problem);
        }
        return value;
    }

    private static String quote(String value) {
        return value == null ? "null" : '"' + value + '"';
    }
}
