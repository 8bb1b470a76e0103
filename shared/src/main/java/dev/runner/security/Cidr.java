package dev.runner.security;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * An IP network in CIDR notation ({@code 10.0.0.0/8}, {@code fd00::/8}); a bare address is a
 * network of that one address. Parsing never asks DNS: only literals are accepted. The networks
 * an operator trusts handlers in ({@code RUNNER_HANDLER_ALLOWED_NETWORKS}) are a list of these.
 *
 * @param network      the first address of the network (no bits set past the prefix)
 * @param prefixLength leading bits that every member shares: 0..32 for IPv4, 0..128 for IPv6
 */
public record Cidr(InetAddress network, int prefixLength) {

    /** Dotted decimal only: no octal ({@code 010}), hex or shortened ({@code 127.1}) forms, which readers take differently. */
    private static final Pattern IPV4 = Pattern.compile("(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
    /**
     * What an IPv6 literal may hold, starting with a hex digit or a colon and holding a colon: then
     * InetAddress parses the text as a literal or fails, and never takes it for a host name to look up.
     */
    private static final Pattern IPV6 = Pattern.compile("(?=.*:)[0-9A-Fa-f:][0-9A-Fa-f:.]*");

    public Cidr {
        int bits = network.getAddress().length * 8;
        if (prefixLength < 0 || prefixLength > bits) {
            throw new IllegalArgumentException("prefix length must be 0.." + bits + ": " + network.getHostAddress() + "/" + prefixLength);
        }
        byte[] bytes = network.getAddress();
        for (int bit = prefixLength; bit < bits; bit++) {
            if ((bytes[bit / 8] & (0x80 >>> (bit % 8))) != 0) {
                throw new IllegalArgumentException(network.getHostAddress() + "/" + prefixLength
                        + " has bits set past its prefix (write the network's first address)");
            }
        }
    }

    /** {@code address/prefix} or a bare address; IllegalArgumentException naming what is wrong. */
    public static Cidr parse(String text) {
        String trimmed = text.strip();
        int slash = trimmed.indexOf('/');
        String address = slash < 0 ? trimmed : trimmed.substring(0, slash);
        InetAddress network = literal(address);
        if (slash < 0) {
            return new Cidr(network, network.getAddress().length * 8);
        }
        String prefix = trimmed.substring(slash + 1);
        if (!prefix.matches("[0-9]{1,3}")) {
            throw new IllegalArgumentException("not a prefix length: " + trimmed);
        }
        return new Cidr(network, Integer.parseInt(prefix));
    }

    /** A comma-separated list ({@code 10.0.0.0/8, fd00::/8}); null, blank or empty entries = none. */
    public static List<Cidr> parseList(String networks) {
        List<Cidr> parsed = new ArrayList<>();
        if (networks != null) {
            for (String entry : networks.split(",")) {
                if (!entry.isBlank()) {
                    parsed.add(parse(entry));
                }
            }
        }
        return List.copyOf(parsed);
    }

    /** True when the address (IPv4-mapped IPv6 read as its IPv4 address) is in this network. */
    public boolean contains(InetAddress address) {
        byte[] candidate = unmapped(address).getAddress();
        byte[] net = network.getAddress();
        if (candidate.length != net.length) {
            return false;
        }
        for (int bit = 0; bit < prefixLength; bit += 8) {
            int bitsHere = Math.min(8, prefixLength - bit);
            int mask = (0xFF << (8 - bitsHere)) & 0xFF;
            if ((candidate[bit / 8] & mask) != (net[bit / 8] & mask)) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code ::ffff:a.b.c.d} as {@code a.b.c.d}: a socket to either reaches the same IPv4 host, so
     * both must be judged alike. (InetAddress usually converts them itself, Inet6Address.getByAddress does not.)
     */
    public static InetAddress unmapped(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (address instanceof Inet6Address && isMapped(bytes)) {
            try {
                return InetAddress.getByAddress(new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]});
            } catch (UnknownHostException impossible) {
                throw new IllegalStateException(impossible);
            }
        }
        return address;
    }

    private static boolean isMapped(byte[] bytes) {
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[10] == (byte) 0xFF && bytes[11] == (byte) 0xFF;
    }

    private static InetAddress literal(String text) {
        try {
            if (IPV4.matcher(text).matches()) {
                String[] parts = text.split("\\.");
                byte[] bytes = new byte[4];
                for (int i = 0; i < 4; i++) {
                    bytes[i] = (byte) Integer.parseInt(parts[i]);
                }
                return InetAddress.getByAddress(bytes);
            }
            if (IPV6.matcher(text).matches()) {
                InetAddress parsed = InetAddress.getByName(text);
                if (parsed instanceof Inet4Address) {
                    throw new IllegalArgumentException("write IPv4-mapped networks in IPv4 form: " + text);
                }
                return parsed;
            }
        } catch (UnknownHostException e) {
            // falls through to the message below
        }
        throw new IllegalArgumentException("not an IPv4 or IPv6 address: " + text);
    }

    @Override
    public String toString() {
        return network.getHostAddress() + "/" + prefixLength;
    }
}
