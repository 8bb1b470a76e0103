package dev.runner.functions;

import dev.runner.app.Runner;
import dev.runner.log.Log;
import org.crac.Context;
import org.crac.Core;
import org.crac.Resource;

import java.time.Duration;
import java.util.Set;

/**
 * A Lambda function's root across a SnapStart snapshot. At init the root starts opening what the
 * function's main path connects to ({@link Runner#openInBackground}: a Postgres connection with its
 * login secret, the Redis connection, the SQS client), which also loads pgjdbc's, Lettuce's, the
 * SDK's and Jackson's classes for those paths, and primes what every first invocation does besides
 * (the metrics' EMF writer). Before the checkpoint this waits for that to finish, so the
 * snapshot holds the loaded and initialised classes, then closes the connections, which would be
 * dead after a restore; after the restore they start opening again, beside the first request.
 * Without SnapStart (or a CRaC JVM) the hooks are never called and the opening at init stands.
 * The function holds this object: CRaC keeps only weak references to what is registered.
 */
final class SnapStartHooks implements Resource {

    private static final Log LOG = Log.of(SnapStartHooks.class);
    /** Lambda allows the checkpoint hooks 10 s in all; the opening at init is normally done well before. */
    private static final Duration OPENING_WAIT = Duration.ofSeconds(8);

    private final Runner root;
    private final Set<Runner.Connection> connections;
    private final Thread priming;
    private volatile Runner.Opening opening;

    private SnapStartHooks(Runner root, Set<Runner.Connection> connections, Runnable prime) {
        this.root = root;
        this.connections = connections;
        this.opening = root.openInBackground(connections);
        this.priming = Thread.ofPlatform().name("runner-prime").daemon().start(() -> {
            try {
                prime.run();
            } catch (RuntimeException e) {
                LOG.warn("priming at init failed; the first invocation does it instead", "error", e);
            }
        });
    }

    /**
     * Starts opening what the function's path connects to, and {@code prime} (work every first
     * invocation would otherwise do, connecting nowhere) on a thread of its own; registers the hooks.
     * Keep the result.
     */
    static SnapStartHooks openAndRegister(Runner root, Set<Runner.Connection> connections, Runnable prime) {
        SnapStartHooks hooks = new SnapStartHooks(root, Set.copyOf(connections), prime);
        Core.getGlobalContext().register(hooks);
        return hooks;
    }

    @Override
    public void beforeCheckpoint(Context<? extends Resource> context) throws InterruptedException {
        long started = System.nanoTime();
        if (!opening.await(OPENING_WAIT) || !priming.join(OPENING_WAIT.minusNanos(System.nanoTime() - started))) {
            LOG.warn("connections still opening (or priming) at the checkpoint; closing what is open", "waited", OPENING_WAIT);
        }
        root.disconnect();
    }

    @Override
    public void afterRestore(Context<? extends Resource> context) {
        opening = root.openInBackground(connections);
    }
}
