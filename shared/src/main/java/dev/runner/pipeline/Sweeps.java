package dev.runner.pipeline;

import dev.runner.backlog.BacklogRelease;
import dev.runner.log.Log;

import java.util.function.Supplier;

/**
 * The scheduler tick's sweep, whatever the traffic, its parts in turn: owed messages, overdue runs
 * and items, abandoned runs ({@link LostWorkSweep}), pending items past their wait (timed out) with
 * the leases the others keep held again ({@link CallbackCompletion#timeOut}), the pages of bulk
 * actions left ({@link BulkActions}), what is past its window or its retention ({@link RetentionSweep}),
 * then the items tenants hold back beyond their horizon that may go now ({@link BacklogRelease}).
 * Each part runs even when one before it failed.
 */
public final class Sweeps {

    private static final Log LOG = Log.of(Sweeps.class);

    /** What one sweep did. */
    public record Swept(int runs, int items, int completed, int timedOut, long bulk, int purged, long trimmed, int released) {
        boolean any() {
            return runs + items + completed + timedOut + bulk + purged + trimmed + released > 0;
        }
    }

    private final LostWorkSweep lostWork;
    private final CallbackCompletion callbacks;
    private final BulkActions bulk;
    private final RetentionSweep retention;
    private final BacklogRelease backlog;

    public Sweeps(LostWorkSweep lostWork, CallbackCompletion callbacks, BulkActions bulk, RetentionSweep retention, BacklogRelease backlog) {
        this.lostWork = lostWork;
        this.callbacks = callbacks;
        this.bulk = bulk;
        this.retention = retention;
        this.backlog = backlog;
    }

    Swept run() {
        LostWorkSweep.Resent owed = attempt("owed messages", lostWork::sendOwed, new LostWorkSweep.Resent(0, 0));
        int overdueRuns = attempt("overdue runs", lostWork::resendOverdueRuns, 0);
        int overdueItems = attempt("overdue items", lostWork::resendOverdueItems, 0);
        int completed = attempt("abandoned runs", lostWork::completeAbandoned, 0);
        int timedOut = attempt("callback timeouts", callbacks::timeOut, 0);
        long paged = attempt("bulk actions", bulk::continueRunning, 0L);
        int purged = attempt("purge", retention::forget, 0);
        long trimmed = attempt("retention", retention::trim, 0L);
        int released = attempt("backlog", backlog::release, 0);
        return new Swept(owed.runs() + overdueRuns, owed.items() + overdueItems, completed, timedOut, paged, purged, trimmed, released);
    }

    /** One part of the sweep; a failure is logged and the tick goes on (the next tick tries again). */
    private static <T> T attempt(String part, Supplier<T> work, T none) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            LOG.warn("sweep part failed; the next tick tries again", "part", part, "error", e);
            return none;
        }
    }
}
