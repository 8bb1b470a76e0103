package dev.runner.functions;

import dev.runner.app.Runner;
import dev.runner.log.Log;
import org.crac.Context;
import org.crac.Core;
import org.crac.Resource;

import java.time.Duration;

/**
 * A Lambda function's root across a SnapStart snapshot. At init the root starts opening what the
 * function's path connects to ({@link Runner#openInBackground}: the Redis connection, a Postgres
 * connection with its login secret, the SQS client), which also loads Lettuce's, pgjdbc's and
 * Jackson's classes for those paths. Before the checkpoint this waits for that to finish, so the
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
    private volatile Runner.Opening opening;

    private SnapStartHooks(Runner root, Runner.Opening opening) {
        this.root = root;
        this.opening = opening;
    }

    /** Starts opening the root's connections and registers the hooks; keep the result. */
    static SnapStartHooks openAndRegister(Runner root) {
        SnapStartHooks hooks = new SnapStartHooks(root, root.openInBackground());
        Core.getGlobalContext().register(hooks);
        return hooks;
    }

    @Override
    public void beforeCheckpoint(Context<? extends Resource> context) throws InterruptedException {
        if (!opening.await(OPENING_WAIT)) {
            LOG.warn("connections still opening at the checkpoint; closing what is open", "waited", OPENING_WAIT);
        }
        root.disconnect();
    }

    @Override
    public void afterRestore(Context<? extends Resource> context) {
        opening = root.openInBackground();
    }
}
