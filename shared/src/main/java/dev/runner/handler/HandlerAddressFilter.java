package dev.runner.handler;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.spi.InetAddressResolver;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The JVM's name resolver (installed by {@link HandlerResolverProvider}), which refuses to resolve
 * a handler's host name to an address its {@link HandlerUrlPolicy} refuses. This is how the
 * address the HTTP client actually connects to is checked, so a name that is public when checked
 * and inside when connected (DNS rebinding) never reaches inside.
 *
 * <p>Why a resolver: {@link java.net.http.HttpClient} resolves host names itself, through
 * {@link InetAddress}, and offers no hook to choose or see the address it connects to. Resolving
 * first and connecting to the checked address instead ("pinning") would mean calling the IP with
 * the name only in {@code Host} and SNI: {@code Host} is a restricted header there and TLS would
 * verify the certificate against the IP, so https would break. The resolver SPI (JEP 418) is the one
 * place every lookup of the client goes through. Only names registered by {@link HandlerClient}
 * (hosts that passed the policy when called) are screened; every other lookup (Postgres, Redis and
 * SQS hosts, private in a VPC) passes through untouched. A registered name stays registered for
 * the JVM's life: the set is bounded by the handler hosts the types name.
 *
 * <p>The JVM caches lookups (30 s by default) in front of the resolver; an entry for a handler
 * host was either screened here or checked by the policy just before registration, so the cache
 * only ever holds addresses that were accepted. {@link #requireInstalled} makes a JVM where the
 * provider was not loaded (another provider first, {@code jdk.net.hosts.file} set) fail at start
 * rather than call handlers unscreened.
 */
public final class HandlerAddressFilter implements InetAddressResolver {

    /** Normalised handler host → the policies of the clients that call it; an address must pass all. */
    private static final Map<String, Set<HandlerUrlPolicy>> HANDLER_HOSTS = new ConcurrentHashMap<>();
    /** Normalised handler host → why its last lookup was refused, so a failed connect can say why. */
    private static final Map<String, String> REFUSED = new ConcurrentHashMap<>();
    private static volatile boolean installed;

    private final InetAddressResolver delegate;

    HandlerAddressFilter(InetAddressResolver delegate) {
        this.delegate = delegate;
    }

    /** The filter over the resolver that would otherwise serve the JVM; called by resolver providers only. */
    public static InetAddressResolver install(InetAddressResolver delegate) {
        installed = true;
        return new HandlerAddressFilter(delegate);
    }

    /** Fails unless this filter is the JVM's resolver: handler calls must not go out unscreened. */
    static void requireInstalled() {
        if (!installed) {
            try {
                // The first lookup of a name loads the JVM's resolver provider.
                InetAddress.getAllByName("localhost");
            } catch (UnknownHostException ignored) {
                // the resolver is loaded either way
            }
        }
        if (!installed) {
            throw new IllegalStateException("the handler address filter is not the JVM's name resolver (" + HandlerResolverProvider.class.getName()
                    + " not loaded from META-INF/services, another resolver provider first, or jdk.net.hosts.file set):"
                    + " handler calls could be rebound to internal addresses");
        }
    }

    /** Screens every later lookup of this host against the policy. */
    static void register(String host, HandlerUrlPolicy policy) {
        HANDLER_HOSTS.computeIfAbsent(normalised(host), h -> ConcurrentHashMap.newKeySet()).add(policy);
    }

    /** Why the last lookup of this handler host was refused; empty when it was not, or the host is not a handler's. */
    static Optional<String> lastRefusal(String host) {
        return Optional.ofNullable(REFUSED.get(normalised(host)));
    }

    @Override
    public Stream<InetAddress> lookupByName(String host, LookupPolicy lookupPolicy) throws UnknownHostException {
        String key = normalised(host);
        Set<HandlerUrlPolicy> policies = HANDLER_HOSTS.get(key);
        if (policies == null) {
            return delegate.lookupByName(host, lookupPolicy);
        }
        List<InetAddress> addresses;
        try {
            addresses = delegate.lookupByName(host, lookupPolicy).toList();
        } catch (UnknownHostException e) {
            // Not found is not refused: it may be found on a retry.
            REFUSED.remove(key);
            throw e;
        }
        for (InetAddress address : addresses) {
            for (HandlerUrlPolicy policy : policies) {
                Optional<String> refusal = policy.addressRefusal(host, address);
                if (refusal.isPresent()) {
                    REFUSED.put(key, refusal.get());
                    throw new UnknownHostException(refusal.get());
                }
            }
        }
        REFUSED.remove(key);
        return addresses.stream();
    }

    @Override
    public String lookupByAddress(byte[] address) throws UnknownHostException {
        return delegate.lookupByAddress(address);
    }

    /** DNS names are case-insensitive and may end in the root's dot: one key for every spelling. */
    private static String normalised(String host) {
        String lower = host.toLowerCase(Locale.ROOT);
        return lower.endsWith(".") ? lower.substring(0, lower.length() - 1) : lower;
    }
}
