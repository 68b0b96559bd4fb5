package io.krabka.streams.coordination.members;

import io.krabka.streams.coordination.MemberId;
import java.net.URI;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a member answers HTTP, as it advertises itself on the topic
 * {@code <coordination topic>-members}. It is a claim, not a permission: whoever routes
 * to it still decides whether the target is allowed.
 *
 * @param member the member
 * @param url where it answers: {@code http://} or {@code https://}, a host, printable
 *     ASCII only, at most {@value #MAX_URL_BYTES} bytes (golden-vectors/README.md)
 * @param writtenAt when the member wrote it, epoch milliseconds on its clock
 */
public record MemberAddress(MemberId member, String url, long writtenAt) {

    /** The longest url, in bytes (it is ASCII, so also in characters). */
    public static final int MAX_URL_BYTES = 2048;

    /**
     * Validates the url.
     *
     * @throws IllegalArgumentException naming what is wrong with it
     */
    public MemberAddress {
        Objects.requireNonNull(member, "member");
        Objects.requireNonNull(url, "url");
        Optional<String> problem = urlProblem(url);
        if (problem.isPresent()) {
            throw new IllegalArgumentException("advertised url \"" + url + "\" " + problem.get());
        }
    }

    /** The url as a {@link URI}. */
    public URI uri() {
        return URI.create(url);
    }

    /**
     * What is wrong with {@code url} as an advertised address, or empty when nothing is:
     * the rules of golden-vectors/README.md, in their order.
     */
    public static Optional<String> urlProblem(String url) {
        if (url.isEmpty()) {
            return Optional.of("is empty");
        }
        if (url.length() > MAX_URL_BYTES) {
            return Optional.of("is longer than " + MAX_URL_BYTES + " bytes");
        }
        for (int i = 0; i < url.length(); i++) {
            char c = url.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return Optional.of(String.format(
                        "has character U+%04X at %d: only printable ASCII is allowed "
                                + "(a host name in punycode, an IPv6 address in brackets)",
                        (int) c, i));
            }
        }
        for (String scheme : new String[] {"http://", "https://"}) {
            if (url.startsWith(scheme)) {
                String rest = url.substring(scheme.length());
                if (rest.isEmpty() || "/?#".indexOf(rest.charAt(0)) >= 0) {
                    return Optional.of("has no host after " + scheme);
                }
                return Optional.empty();
            }
        }
        return Optional.of("does not start with http:// or https://");
    }
}
