package dev.runner.handler;

import dev.runner.security.Cidr;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Which handler URLs Runner may call, so that a type cannot point Runner inside the network it
 * runs in (SSRF: the instance metadata service, the VPC's databases, loopback services). A URL is
 * accepted when it is {@code https} and every address its host resolves to is public, or when
 * every address is inside a network the operator allows with {@value #VARIABLE} (then plain
 * {@code http} is accepted too). Checked when a type is saved ({@link #check}) and again on every
 * call, whose connection goes to an address that check accepted and to no other
 * ({@link HandlerTransport}): a name that resolves elsewhere later (DNS rebinding) is refused at the
 * next call's check and never reached in between.
 *
 * @param allowedNetworks networks the operator trusts; empty = public addresses only
 */
public record HandlerUrlPolicy(List<Cidr> allowedNetworks) {

    public static final String VARIABLE = "RUNNER_HANDLER_ALLOWED_NETWORKS";

    /** IPv4 ranges that are not the public internet (IANA special-purpose registry), each with what it is. */
    private static final List<Range> NOT_PUBLIC_V4 = ranges(
            "0.0.0.0/8", "a 'this network' address (0.0.0.0 reaches the local host)",
            "10.0.0.0/8", "a private address",
            "100.64.0.0/10", "a carrier-grade NAT address",
            "127.0.0.0/8", "a loopback address",
            "169.254.0.0/16", "a link-local address (the instance metadata service is there)",
            "172.16.0.0/12", "a private address",
            "192.0.0.0/24", "an IETF protocol address",
            "192.0.2.0/24", "a documentation address",
            "192.88.99.0/24", "a 6to4 relay address",
            "192.168.0.0/16", "a private address",
            "198.18.0.0/15", "a benchmarking address",
            "198.51.100.0/24", "a documentation address",
            "203.0.113.0/24", "a documentation address",
            "224.0.0.0/4", "a multicast address",
            "240.0.0.0/4", "a reserved address");

    /** IPv6 ranges that are not the public internet; anything outside 2000::/3 is refused as well. */
    private static final List<Range> NOT_PUBLIC_V6 = ranges(
            "::/128", "the unspecified address (it reaches the local host)",
            "::1/128", "a loopback address",
            "::/96", "an IPv4-compatible address (deprecated)",
            "64:ff9b:1::/48", "a local-use NAT64 address",
            "100::/64", "a discard-only address",
            "2001::/23", "an IETF protocol address (Teredo among them)",
            "2001:db8::/32", "a documentation address",
            "3fff::/20", "a documentation address",
            "fc00::/7", "a unique-local address",
            "fe80::/10", "a link-local address",
            "fec0::/10", "a site-local address (deprecated)",
            "ff00::/8", "a multicast address");

    private static final Cidr GLOBAL_UNICAST = Cidr.parse("2000::/3");
    /** Forms that carry an IPv4 address inside an IPv6 one: judged by the IPv4 address they reach. */
    private static final Cidr NAT64 = Cidr.parse("64:ff9b::/96");
    private static final Cidr SIX_TO_FOUR = Cidr.parse("2002::/16");

    public HandlerUrlPolicy {
        allowedNetworks = List.copyOf(allowedNetworks);
    }

    /** Public addresses only. */
    public static HandlerUrlPolicy publicOnly() {
        return new HandlerUrlPolicy(List.of());
    }

    /** A comma-separated CIDR list as {@value #VARIABLE} holds it; null or blank = none. */
    public static HandlerUrlPolicy parse(String networks) {
        return new HandlerUrlPolicy(Cidr.parseList(networks));
    }

    /** Why a type may not name this handler URL, resolving its host now; empty = accepted. */
    public Optional<String> check(URI url) {
        return switch (verdict(url)) {
            case Verdict.Accepted accepted -> Optional.empty();
            case Verdict.Refused refused -> Optional.of(refused.reason());
            case Verdict.Unresolvable unresolvable -> Optional.of(unresolvable.reason());
        };
    }

    /** What may be done with a URL now. */
    sealed interface Verdict {
        /** Callable at these addresses, the ones checked: a call connects to them and to no later answer of DNS. */
        record Accepted(List<InetAddress> addresses) implements Verdict {}

        /** Not a URL Runner calls, whatever DNS says later: a permanent refusal. */
        record Refused(String reason) implements Verdict {}

        /** The host does not resolve (now): nothing is known yet. */
        record Unresolvable(String reason) implements Verdict {}
    }

    Verdict verdict(URI url) {
        Optional<String> shape = shapeRefusal(url);
        if (shape.isPresent()) {
            return new Verdict.Refused(shape.get());
        }
        InetAddress[] addresses;
        try {
            // Resolved as the HTTP client resolves it (InetAddress, literals in every form it reads).
            addresses = InetAddress.getAllByName(url.getHost());
        } catch (UnknownHostException e) {
            return new Verdict.Unresolvable("handler host " + url.getHost() + " does not resolve");
        }
        return refusal(url, addresses).<Verdict>map(Verdict.Refused::new).orElseGet(() -> new Verdict.Accepted(List.of(addresses)));
    }

    /** Why a URL is refused whatever its host resolves to. */
    static Optional<String> shapeRefusal(URI url) {
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !scheme.equals("http")) {
            return Optional.of("a handler URL must be https: " + url.getScheme());
        }
        if (url.getHost() == null) {
            return Optional.of("a handler URL needs a host name");
        }
        if (url.getRawUserInfo() != null) {
            return Optional.of("a handler URL may not carry credentials (user:password@)");
        }
        return Optional.empty();
    }

    /** Why a URL whose host resolved to these addresses is refused; empty = accepted. */
    Optional<String> refusal(URI url, InetAddress... addresses) {
        boolean plain = "http".equalsIgnoreCase(url.getScheme());
        for (InetAddress address : addresses) {
            if (allows(address)) {
                continue;
            }
            Optional<String> inside = addressRefusal(url.getHost(), address);
            if (inside.isPresent()) {
                return inside;
            }
            if (plain) {
                return Optional.of("plain http is accepted only inside " + VARIABLE + " (" + networks() + "), and "
                        + where(url.getHost(), address, "outside them") + ": use https");
            }
        }
        return Optional.empty();
    }

    /** Why connecting to this address for a handler host is refused, whatever the scheme; empty = public or allowed. */
    private Optional<String> addressRefusal(String host, InetAddress address) {
        if (allows(address)) {
            return Optional.empty();
        }
        return notPublic(address).map(what -> where(host, address, what) + "; handlers are called at public addresses only, unless "
                + VARIABLE + " allows the network");
    }

    private boolean allows(InetAddress address) {
        return allowedNetworks.stream().anyMatch(network -> network.contains(address));
    }

    /** What kind of address this is when it is not on the public internet; empty = public. */
    static Optional<String> notPublic(InetAddress address) {
        InetAddress ip = Cidr.unmapped(address);
        if (ip instanceof Inet4Address) {
            return NOT_PUBLIC_V4.stream().filter(range -> range.cidr().contains(ip)).map(Range::what).findFirst();
        }
        byte[] bytes = ip.getAddress();
        if (NAT64.contains(ip)) {
            return embedded(bytes, 12, "NAT64");
        }
        if (SIX_TO_FOUR.contains(ip)) {
            return embedded(bytes, 2, "6to4");
        }
        Optional<String> special = NOT_PUBLIC_V6.stream().filter(range -> range.cidr().contains(ip)).map(Range::what).findFirst();
        if (special.isPresent() || GLOBAL_UNICAST.contains(ip)) {
            return special;
        }
        return Optional.of("not a global unicast address (outside 2000::/3)");
    }

    private static Optional<String> embedded(byte[] bytes, int at, String form) {
        try {
            InetAddress inner = InetAddress.getByAddress(new byte[] {bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]});
            return notPublic(inner).map(what -> "a " + form + " form of " + inner.getHostAddress() + ", " + what);
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** "127.0.0.1 is a loopback address", or "host resolves to 127.0.0.1, a loopback address". */
    private static String where(String host, InetAddress address, String what) {
        // A URI's IP literal is a dotted quad or bracketed: anything else is a name.
        boolean literal = host.startsWith("[") || host.equals(address.getHostAddress());
        return literal ? host + " is " + what : host + " resolves to " + address.getHostAddress() + ", " + what;
    }

    private String networks() {
        return allowedNetworks.isEmpty() ? "none set" : allowedNetworks.stream().map(Cidr::toString).reduce((a, b) -> a + "," + b).orElseThrow();
    }

    @Override
    public String toString() {
        return "HandlerUrlPolicy[allowedNetworks=" + networks() + "]";
    }

    private record Range(Cidr cidr, String what) {}

    private static List<Range> ranges(String... cidrAndWhat) {
        List<Range> ranges = new ArrayList<>();
        for (int i = 0; i < cidrAndWhat.length; i += 2) {
            ranges.add(new Range(Cidr.parse(cidrAndWhat[i]), cidrAndWhat[i + 1]));
        }
        return List.copyOf(ranges);
    }
}
