package dev.runner.functions;

import dev.runner.app.Opening;
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
 * a restore; after the restore they start opening again, beside the first request. Migrate has
 * no root and no class list: its hooks only wait for the metrics' writer to be primed.
 * Without SnapStart (or a CRaC JVM) the hooks are never called and the opening at init stands.
 * The function holds this object: CRaC keeps only weak references to what is registered.
 */
final class SnapStartHooks implements Resource {

    private static final Log LOG = Log.of(SnapStartHooks.class);
    /**
     * The hooks before a checkpoint count towards Lambda's init limit (130 s, or the function's
     * timeout if longer); a healthy opening takes milliseconds, so this only bounds a stuck one.
     */
    private static final Duration OPENING_WAIT = Duration.ofSeconds(8);

    /** Whether to prime the function's classes at the checkpoint; the cold-start bench turns it off to list them. */
    private static final boolean PRIME_CLASSES = Boolean.parseBoolean(System.getProperty("runner.primeClasses", "true"));

    private final Runner root;
    private final Class<?> function;
    private final Set<Runner.Connection> connections;
    private final Thread priming;
    private volatile Opening opening;

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
        boolean settled = opening.await(OPENING_WAIT) && priming.join(OPENING_WAIT.minusNanos(System.nanoTime() - started));
        try {
            if (!settled) {
                LOG.warn("connections still opening (or priming) at the checkpoint; classes not primed, closing what is open",
                        "waited", OPENING_WAIT);
            } else if (PRIME_CLASSES) {
                // Only once the openers and the priming are done: the threads still alive (Netty's
                // event loops, Hikari's housekeeper) are idle, so no other thread initialises
                // classes alongside this one, in an order that could deadlock with it.
                ClassPriming.load(function);
            }
        } catch (RuntimeException primingFailed) {
            disconnect(primingFailed);
            throw primingFailed;
        }
        disconnect(null);
    }

    /** Closes what is open; a failure here is added to {@code earlier}, which names the class that failed, if there is one. */
    private void disconnect(RuntimeException earlier) {
        if (root == null) {
            return;
        }
        try {
            root.disconnect();
        } catch (RuntimeException e) {
            if (earlier == null) {
                throw e;
            }
            earlier.addSuppressed(e);
        }
    }

    @Override
    public void afterRestore(Context<? extends Resource> context) {
        opening = open();
    }

    private Opening open() {
        return root == null ? new Opening(List.of()) : root.openInBackground(connections);
    }
}
