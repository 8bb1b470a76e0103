/**
 * Admission control of the item worker, kept in Redis: pause flags, circuit breakers per
 * integration, concurrency and rate per handler, and a sliding window per tenant.
 *
 * <p>{@link dev.runner.guard.Guard} is the entry point: {@code admit} before the handler calls,
 * {@code report} after them, one pipelined Redis round trip each. Every check is a Lua script in
 * {@code resources/redis/}, whose header is its contract; time comes from the injected clock.
 *
 * <p>The rules, in one place:
 * <ul>
 *   <li><b>Breaker</b> ({@link dev.runner.guard.BreakerState}): closed → open after
 *       failureThreshold consecutive failures; open → half-open after openFor; half-open admits at
 *       most halfOpenSuccesses probes in flight (others wait as BREAKER_PROBING for
 *       shortestDeferral) and closes after halfOpenSuccesses successes; any half-open failure
 *       re-opens. While open, items are deferred until half-open: an outage burns no attempt.</li>
 *   <li><b>Concurrency</b>: one lease per admitted item, expiring after leaseTtl if its worker
 *       never reports; leases (and half-open probes) are taken inside one script, so concurrent workers never exceed the
 *       limit. Full: HANDLER_CONCURRENCY for shortestDeferral.</li>
 *   <li><b>Rate</b>: a one-minute sliding log per handler. Full: HANDLER_RATE until the entry
 *       ahead of the item leaves the window; deferred items of one call queue behind each other.</li>
 *   <li><b>Priority inside a handler</b>: items with priority above 1 (manual, queue, schedule) may fill
 *       only limit − ⌈limit/4⌉ of concurrency and of rate (for limits ≥ 2); the rest stays for
 *       webhook items.</li>
 *   <li><b>Tenant window</b>: an exact sliding window of perMinute per minute, whose sorted set also
 *       holds future slots. An item over the limit gets the first time the window has room for it
 *       (at least shortestDeferral away) and keeps that slot; coming back, it is admitted on it
 *       (if it comes back early, e.g. capped by SQS's 15-minute delay, it waits for the rest). A
 *       20,000-item tenant at 1,000/min is spread over 20 minutes with one deferral per item (two
 *       for those beyond 15 minutes). Memory: one entry per admitted item of the last minute plus
 *       one per waiting item.</li>
 *   <li><b>Handler and tenant decide side by side</b> (two slots, one round trip): the item is
 *       admitted only if both admit; paused wins; otherwise the longer delay and its reason. What
 *       one side took for an item that did not pass the other is given back on the next round
 *       trip; a future tenant slot is kept.</li>
 *   <li><b>Redis unavailable</b>: fail open (see {@link dev.runner.guard.Guard}).</li>
 * </ul>
 *
 * <p>Cost at batch 10, one group, one tenant, both handler limits set: 2 round trips and 21
 * commands server-side including the 3 EVALSHA (BudgetIT counts them).
 */
package dev.runner.guard;
