package dev.runner.functions;

import dev.runner.app.Runner;
import dev.runner.log.Log;
import org.crac.Context;
import org.crac.Core;
import org.crac.Resource;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * A Lambda function's root across a SnapStart snapshot. At init the root starts opening what the
 * function's main path connects to ({@link Runner#openInBackground}: a Postgres connection with its
 * login secret, the Redis connection, the SQS client), which also loads pgjdbc's, Lettuce's, the
 * SDK's and Jackson's classes for those paths, and primes what every first invocation does besides
 * (the metrics' EMF writer). Before the checkpoint this waits for that to finish, so the
 * snapshot holds the loaded and initialised classes, loads the classes the function's first
 * invocation would ({@link ClassPriming}), then closes the connections, which would be dead after
 * a restore; after the restore they start opening again, beside the first request. A function
 * with no root (Migrate) has nothing to open or close; its classes are primed all the same.
 * Without SnapStart (or a CRaC JVM) the hooks are never called and the opening at init stands.
 * The function holds this object: CRaC keeps only weak references to what is registered.
 */
final class SnapStartHooks implements Resource {

    private static final Log LOG = Log.of(SnapStartHooks.class);
    /** Lambda allows the checkpoint hooks 10 s in all; the opening at init is normally done well before. */
    private static final Duration OPENING_WAIT = Duration.ofSeconds(8);

    /** Whether to prime the function's classes at the checkpoint; the cold-start bench turns it off to list them. */
    private static final boolean PRIME_CLASSES = Boolean.parseBoolean(System.getProperty("runner.primeClasses", "true"));

    private final Runner root;
    private final Class<?> function;
    private final Set<Runner.Connection> connections;
    private final Thread priming;
    private volatile Runner.Opening opening;

    private SnapStartHooks(Runner root, Class<?> function, Set<Runner.Connection> connections, Runnable prime) {
        this.root = root;
        this.function = function;
        this.connections = connections;
        this.opening = open();
        this.priming = Thread.ofPlatform().name("runner-prime").daemon().start(() -> {
            try {
                prime.run();
            } catch (RuntimeException e) {
                LOG.warn("priming at init failed; the first invocation does it instead", "error", e);
            }
        });
    }

    /**
     * Starts opening what the function's path connects to ({@code root} null: nothing), and
     * {@code prime} (work every first invocation would otherwise do, connecting nowhere) on a thread
     * of its own; registers the hooks. Keep the result.
     */
    static SnapStartHooks openAndRegister(Runner root, Class<?> function, Set<Runner.Connection> connections, Runnable prime) {
        SnapStartHooks hooks = new SnapStartHooks(root, function, Set.copyOf(connections), prime);
        Core.getGlobalContext().register(hooks);
        return hooks;
    }

    @Override
    public void beforeCheckpoint(Context<? extends Resource> context) throws InterruptedException {
        long started = System.nanoTime();
        if (!opening.await(OPENING_WAIT) || !priming.join(OPENING_WAIT.minusNanos(System.nanoTime() - started))) {
            LOG.warn("connections still opening (or priming) at the checkpoint; closing what is open", "waited", OPENING_WAIT);
        }
        if (PRIME_CLASSES) {
            // Here, not at init: the main thread waits in the runtime client and the openers are
            // done, so no other thread initialises classes alongside (no class-init deadlock),
            // and a start without SnapStart does not pay for it.
            ClassPriming.load(function);
        }
        if (root != null) {
            root.disconnect();
        }
    }

    @Override
    public void afterRestore(Context<? extends Resource> context) {
        opening = open();
    }

    private Runner.Opening open() {
        return root == null ? new Runner.Opening(List.of()) : root.openInBackground(connections);
    }
}
