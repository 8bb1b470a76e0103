package dev.runner.handler;

import java.net.spi.InetAddressResolver;
import java.net.spi.InetAddressResolverProvider;

/**
 * Installs {@link HandlerAddressFilter} as the JVM's name resolver over the built-in one. Listed
 * in {@code META-INF/services}; the JVM loads it on its first name lookup, through the thread's
 * context class loader (the function's class loader in Lambda, set before the handler class loads).
 */
public final class HandlerResolverProvider extends InetAddressResolverProvider {

    @Override
    public InetAddressResolver get(Configuration configuration) {
        return HandlerAddressFilter.install(configuration.builtinResolver());
    }

    @Override
    public String name() {
        return "runner-handler-address-filter";
    }
}
