package dev.runner.handler;

import dev.runner.security.Cidr;
import org.junit.jupiter.api.Test;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Address literals only: nothing here asks DNS. */
class HandlerUrlPolicyTest {

    private static final HandlerUrlPolicy PUBLIC_ONLY = HandlerUrlPolicy.publicOnly();
    private static final URI HTTPS = URI.create("https://handler.example.com/h");
    private static final URI HTTP = URI.create("http://handler.example.com/h");

    @Test
    void publicAddressesAreAcceptedOverHttps() {
        for (String address : new String[] {"1.1.1.1", "8.8.8.8", "52.94.236.248", "172.15.255.255", "172.32.0.0", "100.63.255.255",
                "100.128.0.0", "192.167.255.255", "169.253.255.255", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001::1",
                "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"}) {
            assertEquals(Optional.empty(), PUBLIC_ONLY.refusal(HTTPS, ip(address)), address);
        }
    }

    @Test
    void addressesInsideAreRefusedEachWithWhatItIs() {
        refused("127.0.0.1", "a loopback address");
        refused("127.255.255.254", "a loopback address");
        refused("10.0.0.5", "a private address");
        refused("172.16.0.1", "a private address");
        refused("172.31.255.255", "a private address");
        refused("192.168.1.1", "a private address");
        refused("169.254.169.254", "a link-local address (the instance metadata service is there)");
        refused("100.64.0.1", "a carrier-grade NAT address");
        refused("100.127.255.255", "a carrier-grade NAT address");
        refused("0.0.0.0", "a 'this network' address");
        refused("0.1.2.3", "a 'this network' address");
        refused("224.0.0.1", "a multicast address");
        refused("239.255.255.250", "a multicast address");
        refused("255.255.255.255", "a reserved address");
        refused("240.0.0.1", "a reserved address");
        refused("192.0.2.1", "a documentation address");
        refused("198.18.0.1", "a benchmarking address");
        refused("::1", "a loopback address");
        refused("::", "the unspecified address");
        refused("fe80::1", "a link-local address");
        refused("fd00:ec2::254", "a unique-local address");
        refused("fc00::1", "a unique-local address");
        refused("ff02::1", "a multicast address");
        refused("2001:db8::1", "a documentation address");
        refused("2001:0:4136:e378:8000:63bf:3fff:fdd2", "an IETF protocol address (Teredo among them)");
        refused("fec0::1", "a site-local address");
        refused("::7f00:1", "an IPv4-compatible address");
        refused("100::1", "a discard-only address");
        refused("4000::1", "not a global unicast address");
    }

    @Test
    void ipv4AddressesWrappedInIpv6AreJudgedByTheIpv4AddressTheyReach() throws UnknownHostException {
        // Inet6Address.getByAddress keeps the mapped form that InetAddress.getByName would turn into IPv4.
        byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xFF, (byte) 0xFF, (byte) 169, (byte) 254, (byte) 169, (byte) 254};
        InetAddress mappedMetadata = Inet6Address.getByAddress(null, mapped, -1);
        assertTrue(PUBLIC_ONLY.refusal(HTTPS, mappedMetadata).orElseThrow().contains("a link-local address"));
        refused("64:ff9b::a00:1", "a NAT64 form of 10.0.0.1, a private address");
        refused("2002:7f00:1::1", "a 6to4 form of 127.0.0.1, a loopback address");
        refused("64:ff9b:1::1", "a local-use NAT64 address");
        assertEquals(Optional.empty(), HandlerUrlPolicy.parse("169.254.0.0/16").refusal(HTTP, mappedMetadata), "allowed as its IPv4 network");
    }

    @Test
    void oneRefusedAddressAmongPublicOnesRefusesTheUrl() {
        Optional<String> refusal = PUBLIC_ONLY.refusal(HTTPS, ip("1.1.1.1"), ip("10.0.0.1"));
        assertEquals(Optional.of("handler.example.com resolves to 10.0.0.1, a private address; handlers are called at public addresses only,"
                + " unless RUNNER_HANDLER_ALLOWED_NETWORKS allows the network"), refusal);
    }

    @Test
    void allowedNetworksOpenTheirAddressesToHttpsAndHttp() {
        HandlerUrlPolicy vpc = HandlerUrlPolicy.parse("10.0.0.0/8, fd00::/8");
        assertEquals(Optional.empty(), vpc.refusal(HTTPS, ip("10.1.2.3")));
        assertEquals(Optional.empty(), vpc.refusal(HTTP, ip("10.1.2.3"), ip("fd12::1")));
        assertTrue(vpc.refusal(HTTPS, ip("192.168.0.1")).isPresent(), "only the networks named");
        assertTrue(vpc.refusal(HTTPS, ip("127.0.0.1")).isPresent(), "loopback too");
        assertEquals(Optional.empty(), vpc.refusal(HTTPS, ip("8.8.8.8")), "public stays accepted over https");
    }

    @Test
    void plainHttpIsAcceptedOnlyWhenEveryAddressIsInsideAnAllowedNetwork() {
        HandlerUrlPolicy vpc = HandlerUrlPolicy.parse("10.0.0.0/8");
        assertEquals(Optional.of("plain http is accepted only inside RUNNER_HANDLER_ALLOWED_NETWORKS (10.0.0.0/8), and"
                + " handler.example.com resolves to 8.8.8.8, outside them: use https"), vpc.refusal(HTTP, ip("8.8.8.8")));
        assertTrue(vpc.refusal(HTTP, ip("10.0.0.1"), ip("8.8.8.8")).isPresent());
        assertTrue(PUBLIC_ONLY.refusal(HTTP, ip("8.8.8.8")).orElseThrow().contains("(none set)"));
    }

    @Test
    void urlsOfAnotherShapeAreRefusedWhateverTheyResolveTo() {
        assertEquals(Optional.of("a handler URL must be https: ftp"), HandlerUrlPolicy.shapeRefusal(URI.create("ftp://example.com/h")));
        assertEquals(Optional.of("a handler URL must be https: file"), HandlerUrlPolicy.shapeRefusal(URI.create("file:///etc/passwd")));
        assertEquals(Optional.of("a handler URL may not carry credentials (user:password@)"),
                HandlerUrlPolicy.shapeRefusal(URI.create("https://user:pw@example.com/h")));
        assertEquals(Optional.of("a handler URL needs a host name"), HandlerUrlPolicy.shapeRefusal(URI.create("https://127.1/h")));
        assertEquals(Optional.of("a handler URL needs a host name"), HandlerUrlPolicy.shapeRefusal(URI.create("https:/h")));
        assertEquals(Optional.empty(), HandlerUrlPolicy.shapeRefusal(URI.create("HTTPS://example.com:8443/h")));
    }

    @Test
    void literalHostsAreCheckedAsTheHttpClientReadsThem() {
        assertTrue(PUBLIC_ONLY.check(URI.create("https://127.0.0.1:8080/h")).orElseThrow().startsWith("127.0.0.1 is a loopback address"));
        assertTrue(PUBLIC_ONLY.check(URI.create("https://[::1]/h")).orElseThrow().startsWith("[::1] is a loopback address"));
        assertTrue(PUBLIC_ONLY.check(URI.create("https://[::ffff:127.0.0.1]/h")).orElseThrow().contains("a loopback address"));
        assertTrue(PUBLIC_ONLY.check(URI.create("https://0.0.0.0/h")).orElseThrow().contains("'this network'"));
        assertTrue(PUBLIC_ONLY.check(URI.create("https://169.254.169.254/latest/meta-data")).orElseThrow().contains("metadata"));
        assertEquals(Optional.empty(), PUBLIC_ONLY.check(URI.create("https://1.1.1.1/h")));
        assertEquals(Optional.empty(), HandlerUrlPolicy.parse("127.0.0.0/8").check(URI.create("http://127.0.0.1:9000/h")));
    }

    @Test
    void networksAreReadFromACommaSeparatedList() {
        assertEquals(HandlerUrlPolicy.publicOnly(), HandlerUrlPolicy.parse(" "));
        assertEquals(List.of(Cidr.parse("127.0.0.0/8"), Cidr.parse("::1/128")), HandlerUrlPolicy.parse("127.0.0.0/8, ::1/128,").allowedNetworks());
        assertEquals("HandlerUrlPolicy[allowedNetworks=10.0.0.0/8,0:0:0:0:0:0:0:1/128]", HandlerUrlPolicy.parse("10.0.0.0/8,::1").toString());
    }

    private static void refused(String address, String what) {
        Optional<String> refusal = PUBLIC_ONLY.refusal(HTTPS, ip(address));
        assertTrue(refusal.isPresent() && refusal.get().contains(what), address + ": " + refusal);
    }

    private static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
