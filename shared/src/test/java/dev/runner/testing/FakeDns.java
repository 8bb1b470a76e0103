package dev.runner.testing;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.spi.InetAddressResolver;
import java.net.spi.InetAddressResolverProvider;
import java.security.Security;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * A DNS table a test can change from one lookup to the next (DNS rebinding), since no DNS server
 * is at hand. {@link Provider} makes it the test JVM's resolver: names in the table are answered
 * from it, every other name by the system. Lookups are not cached in a test JVM (the provider turns
 * the JVM's cache off before the cache first reads its setting), so a changed answer is the next
 * one seen.
 */
public final class FakeDns {

    /** Host → the answers still to give; the last one is given from then on. */
    private static final Map<String, Deque<List<InetAddress>>> ANSWERS = new ConcurrentHashMap<>();

    private FakeDns() {}

    /** Every lookup of {@code host} answers these addresses (literals). */
    public static void answer(String host, String... addresses) {
        answers(host, List.of(addresses));
    }

    /** The first lookup of {@code host} answers {@code first}, every later one {@code then}: a rebinding name. */
    public static void answerThen(String host, List<String> first, List<String> then) {
        answers(host, first, then);
    }

    /** Back to the system's answer. */
    public static void forget(String host) {
        ANSWERS.remove(host);
    }

    @SafeVarargs
    private static void answers(String host, List<String>... answers) {
        Deque<List<InetAddress>> queue = new ArrayDeque<>();
        for (List<String> answer : answers) {
            queue.add(answer.stream().map(FakeDns::literal).toList());
        }
        ANSWERS.put(host, queue);
    }

    private static InetAddress literal(String address) {
        try {
            return InetAddress.getByName(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address literal: " + address, e);
        }
    }

    private static List<InetAddress> next(String host) {
        Deque<List<InetAddress>> queue = ANSWERS.get(host);
        if (queue == null) {
            return null;
        }
        synchronized (queue) {
            return queue.size() > 1 ? queue.poll() : queue.peek();
        }
    }

    /** Listed in the test resources' META-INF/services. */
    public static final class Provider extends InetAddressResolverProvider {

        public Provider() {
            // The JVM reads its cache policy after its first lookup, the one that loads this provider.
            Security.setProperty("networkaddress.cache.ttl", "0");
            Security.setProperty("networkaddress.cache.negative.ttl", "0");
        }

        @Override
        public InetAddressResolver get(Configuration configuration) {
            InetAddressResolver system = configuration.builtinResolver();
            return new InetAddressResolver() {
                @Override
                public Stream<InetAddress> lookupByName(String host, LookupPolicy lookupPolicy) throws UnknownHostException {
                    List<InetAddress> answer = next(host);
                    if (answer == null) {
                        return system.lookupByName(host, lookupPolicy);
                    }
                    if (answer.isEmpty()) {
                        throw new UnknownHostException(host);
                    }
                    return answer.stream();
                }

                @Override
                public String lookupByAddress(byte[] address) throws UnknownHostException {
                    return system.lookupByAddress(address);
                }
            };
        }

        @Override
        public String name() {
            return "fake-dns-for-tests";
        }
    }
}
