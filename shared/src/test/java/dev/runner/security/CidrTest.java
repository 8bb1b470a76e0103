package dev.runner.security;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CidrTest {

    @Test
    void aCidrIsALiteralNetworkWithItsPrefix() {
        assertEquals("10.0.0.0/8", Cidr.parse("10.0.0.0/8").toString());
        assertEquals("127.0.0.1/32", Cidr.parse("127.0.0.1").toString());
        assertEquals(128, Cidr.parse("fd00::1").prefixLength());
        assertEquals("0.0.0.0/0", Cidr.parse("0.0.0.0/0").toString());
        assertTrue(Cidr.parse("0.0.0.0/0").contains(ip("203.0.113.9")));
        assertFalse(Cidr.parse("0.0.0.0/0").contains(ip("::1")), "one family per network");
        assertTrue(Cidr.parse("172.16.0.0/12").contains(ip("172.31.255.255")));
        assertFalse(Cidr.parse("172.16.0.0/12").contains(ip("172.32.0.0")));
        assertTrue(Cidr.parse("fe80::/10").contains(ip("febf::1")));
        assertFalse(Cidr.parse("fe80::/10").contains(ip("fec0::1")));
    }

    @Test
    void aMalformedCidrIsRefusedWithoutAskingDns() {
        String[][] cases = {
                {"10.1.0.0/8", "10.1.0.0/8 has bits set past its prefix (write the network's first address)"},
                {"10.0.0.0/33", "prefix length must be 0..32: 10.0.0.0/33"},
                {"::/129", "prefix length must be 0..128: 0:0:0:0:0:0:0:0/129"},
                {"10.0.0.0/", "not a prefix length: 10.0.0.0/"},
                {"10.0.0.0/-1", "not a prefix length: 10.0.0.0/-1"},
                {"010.0.0.0/8", "not an IPv4 or IPv6 address: 010.0.0.0"},
                {"127.1", "not an IPv4 or IPv6 address: 127.1"},
                {"256.0.0.0/8", "not an IPv4 or IPv6 address: 256.0.0.0"},
                {"localhost", "not an IPv4 or IPv6 address: localhost"},
                {"example.com/8", "not an IPv4 or IPv6 address: example.com"},
                {"fe80::1%eth0/64", "not an IPv4 or IPv6 address: fe80::1%eth0"},
                {"fe80:::1/64", "not an IPv4 or IPv6 address: fe80:::1"},
                {"::ffff:10.0.0.0/104", "write IPv4-mapped networks in IPv4 form: ::ffff:10.0.0.0"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], assertThrows(IllegalArgumentException.class, () -> Cidr.parse(c[0])).getMessage(), c[0]);
        }
    }

    @Test
    void aListIsCommaSeparatedAndMayBeEmpty() {
        assertEquals(List.of(), Cidr.parseList(null));
        assertEquals(List.of(), Cidr.parseList(" "));
        assertEquals(List.of(Cidr.parse("127.0.0.0/8"), Cidr.parse("::1/128")), Cidr.parseList("127.0.0.0/8, ::1/128,"));
    }

    private static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
