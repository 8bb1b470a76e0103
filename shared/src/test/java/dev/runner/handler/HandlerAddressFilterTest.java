package dev.runner.handler;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.spi.InetAddressResolver;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The filter over a table standing in for DNS; each test its own host names, as registrations are JVM-wide. */
class HandlerAddressFilterTest {

    private final Map<String, List<InetAddress>> dns = new HashMap<>();
    private final HandlerAddressFilter filter = new HandlerAddressFilter(new InetAddressResolver() {
        @Override
        public Stream<InetAddress> lookupByName(String host, LookupPolicy lookupPolicy) throws UnknownHostException {
            List<InetAddress> answer = dns.get(host);
            if (answer == null) {
                throw new UnknownHostException(host);
            }
            return answer.stream();
        }

        @Override
        public String lookupByAddress(byte[] address) {
            throw new UnsupportedOperationException();
        }
    });
    private final String host = "h-" + UUID.randomUUID() + ".example.com";

    @Test
    void namesThatAreNoHandlersHostPassWhereverTheyResolve() throws UnknownHostException {
        // Postgres, Redis and SQS hosts in a VPC resolve to private addresses, and must.
        dns.put("db.internal", List.of(ip("10.0.3.7")));
        assertEquals(List.of(ip("10.0.3.7")), lookup("db.internal"));
    }

    @Test
    void aHandlersHostThatNowResolvesInsideIsRefusedWithTheReason() throws UnknownHostException {
        HandlerAddressFilter.register(host, HandlerUrlPolicy.publicOnly());
        dns.put(host, List.of(ip("93.184.215.14")));
        assertEquals(List.of(ip("93.184.215.14")), lookup(host));
        assertEquals(Optional.empty(), HandlerAddressFilter.lastRefusal(host));

        dns.put(host, List.of(ip("93.184.215.14"), ip("169.254.169.254")));
        UnknownHostException refused = assertThrows(UnknownHostException.class, () -> lookup(host));

        String reason = host + " resolves to 169.254.169.254, a link-local address (the instance metadata service is there);"
                + " handlers are called at public addresses only, unless RUNNER_HANDLER_ALLOWED_NETWORKS allows the network";
        assertEquals(reason, refused.getMessage());
        assertEquals(Optional.of(reason), HandlerAddressFilter.lastRefusal(host));
        dns.remove(host);
        assertThrows(UnknownHostException.class, () -> lookup(host));
        assertEquals(Optional.empty(), HandlerAddressFilter.lastRefusal(host), "the last lookup decides: not found is not refused");
    }

    @Test
    void everySpellingOfARegisteredNameIsScreened() {
        HandlerAddressFilter.register(host.toUpperCase() + ".", HandlerUrlPolicy.publicOnly());
        dns.put(host, List.of(ip("127.0.0.1")));
        dns.put(host + ".", List.of(ip("127.0.0.1")));
        assertThrows(UnknownHostException.class, () -> lookup(host));
        assertThrows(UnknownHostException.class, () -> lookup(host + "."));
    }

    @Test
    void anAllowedNetworkPassesAndTwoPoliciesForOneHostMustBothAccept() throws UnknownHostException {
        dns.put(host, List.of(ip("10.0.0.8")));
        HandlerAddressFilter.register(host, HandlerUrlPolicy.parse("10.0.0.0/8"));
        assertEquals(List.of(ip("10.0.0.8")), lookup(host));
        HandlerAddressFilter.register(host, HandlerUrlPolicy.publicOnly());
        assertThrows(UnknownHostException.class, () -> lookup(host));
    }

    private List<InetAddress> lookup(String name) throws UnknownHostException {
        return filter.lookupByName(name, InetAddressResolver.LookupPolicy.of(InetAddressResolver.LookupPolicy.IPV4)).toList();
    }

    private static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
