package io.krabka.streams.coordination.spring.routing;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Which addresses a member forwards or redirects to: {@code krabka.coordination.routing.allowed-targets}
 * and this member's scheme. A target names a host; entries about addresses (loopback,
 * private, an address, a CIDR block) need every address the host resolves to to match,
 * entries about names ({@code orders.internal}, {@code *.svc.cluster.local}) match the
 * host as written.
 */
public final class TargetPolicy {

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private final String scheme;
    private final List<String> entries;
    private final List<Predicate<InetAddress>> addressRules = new ArrayList<>();
    private final List<Predicate<String>> nameRules = new ArrayList<>();

    /**
     * @param scheme the only scheme allowed: this member's
     * @param entries the allowed targets
     * @throws IllegalArgumentException naming an entry that is none of the forms
     */
    public TargetPolicy(String scheme, List<String> entries) {
        this.scheme = scheme.toLowerCase(Locale.ROOT);
        this.entries = List.copyOf(entries);
        for (String raw : entries) {
            String entry = raw.trim().toLowerCase(Locale.ROOT);
            if (entry.equals("loopback")) {
                addressRules.add(InetAddress::isLoopbackAddress);
            } else if (entry.equals("private")) {
                addressRules.add(TargetPolicy::isPrivate);
            } else if (entry.contains("/")) {
                addressRules.add(cidr(raw, entry));
            } else if (isAddressLiteral(entry)) {
                InetAddress address = literal(raw, entry);
                addressRules.add(address::equals);
            } else if (entry.startsWith("*.") && entry.length() > 2 && isHostName(entry.substring(2))) {
                String suffix = entry.substring(1);
                nameRules.add(host -> host.endsWith(suffix));
            } else if (isHostName(entry)) {
                nameRules.add(entry::equals);
            } else {
                throw invalid(raw, "it is none of: loopback, private, an address, a CIDR block, a host name, *.domain");
            }
        }
    }

    /** The entries, as configured. */
    public List<String> entries() {
        return entries;
    }

    /** Why {@code target} is not allowed, or empty when it is. */
    public Optional<String> refusal(URI target) {
        if (target.getScheme() == null || !target.getScheme().equalsIgnoreCase(scheme)) {
            return Optional.of("its scheme is not " + scheme + ", this member's");
        }
        String host = target.getHost();
        if (host == null) {
            return Optional.of("it names no host");
        }
        String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
        String name = bare.toLowerCase(Locale.ROOT);
        if (nameRules.stream().anyMatch(rule -> rule.test(name))) {
            return Optional.empty();
        }
        if (addressRules.isEmpty()) {
            return Optional.of(
                    "its host " + host + " is not in krabka.coordination.routing.allowed-targets " + entries);
        }
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(bare);
        } catch (UnknownHostException e) {
            return Optional.of("its host " + host + " does not resolve");
        }
        for (InetAddress address : addresses) {
            if (addressRules.stream().noneMatch(rule -> rule.test(address))) {
                return Optional.of("its host " + host
                        + (name.equals(address.getHostAddress()) ? "" : " (" + address.getHostAddress() + ")")
                        + " is not in krabka.coordination.routing.allowed-targets " + entries);
            }
        }
        return Optional.empty();
    }

    /** Site-local IPv4 (10/8, 172.16/12, 192.168/16), IPv6 unique local (fc00::/7) and the old site-local fec0::/10. */
    static boolean isPrivate(InetAddress address) {
        if (address.isSiteLocalAddress()) {
            return true;
        }
        return address instanceof Inet6Address && (address.getAddress()[0] & 0xfe) == 0xfc;
    }

    private static boolean isAddressLiteral(String entry) {
        return IPV4.matcher(entry).matches() || entry.contains(":");
    }

    private static boolean isHostName(String entry) {
        return !entry.isEmpty()
                && entry.chars().allMatch(c -> Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '.');
    }

    private static InetAddress literal(String raw, String text) {
        String bare = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        if (!isAddressLiteral(bare)) {
            throw invalid(raw, "\"" + text + "\" is not an IPv4 or IPv6 address");
        }
        try {
            return InetAddress.getByName(bare); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw invalid(raw, "\"" + text + "\" is not an IPv4 or IPv6 address");
        }
    }

    private static Predicate<InetAddress> cidr(String raw, String entry) {
        int slash = entry.indexOf('/');
        byte[] network = literal(raw, entry.substring(0, slash)).getAddress();
        int bits;
        try {
            bits = Integer.parseInt(entry.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw invalid(raw, "the prefix length is not a number");
        }
        if (bits < 0 || bits > network.length * 8) {
            throw invalid(raw, "the prefix length " + bits + " is not between 0 and " + network.length * 8);
        }
        return address -> {
            byte[] candidate = address.getAddress();
            if (candidate.length != network.length) {
                return false;
            }
            for (int i = 0; i < bits; i++) {
                int mask = 0x80 >>> (i % 8);
                if ((candidate[i / 8] & mask) != (network[i / 8] & mask)) {
                    return false;
                }
            }
            return true;
        };
    }

    private static IllegalArgumentException invalid(String entry, String why) {
        return new IllegalArgumentException(
                "krabka.coordination.routing.allowed-targets entry \"" + entry + "\" is not valid: " + why);
    }
}
