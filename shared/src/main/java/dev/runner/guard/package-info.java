/**
 * Admission control of the item worker, kept in Redis: pause flags, circuit breakers per
 * integration, concurrency and rate per handler, and a sliding window per tenant.
 *
 * <p>{@link dev.runner.guard.Guard} is the entry point and coordinator: {@code admit} before the
 * handler calls, {@code report} after them, one pipelined Redis round trip each. Each capability is
 * a class with its scripts' codec (arguments into script calls, replies into records):
 * {@code Breaker} (reportOutcome, readBreaker), {@code HandlerLimits} (admitHandler,
 * releaseHandler, the lease doorbell, the pause mirror), {@code TenantWindow} (admitTenant,
 * refundTenant, slots reserved at the source), {@code DeferralCounts} (countDeferrals);
 * {@code GuardRoundTrips} holds the fail-open policy and the give-backs every round trip carries;
 * {@code AdmissionRules} the pure decisions (how the handler's and the tenant's answers combine). Every
 * check is a Lua script in {@code resources/redis/}, whose header is its contract, with shared
 * code in {@code resources/redis/includes/}; time comes from the injected clock.
 *
 * <p>The rules, in one place:
 * <ul>
 *   <li><b>Breaker</b> ({@link dev.runner.guard.BreakerState}): closed → open after
 *       failureThreshold consecutive failures; open → half-open after openFor; half-open admits at
 *       most halfOpenSuccesses probes in flight (others wait as BREAKER_PROBING for
 *       shortestDeferral) and closes after halfOpenSuccesses successes; any half-open failure
 *       re-opens. Only probe calls (calls carrying an item admitted as a probe) decide half-open; a
 *       late answer to a call admitted before the breaker opened is ignored. While open, items are
 *       deferred until half-open: an outage burns no attempt. The open → half-open rule is written
 *       once ({@code includes/breakerAt.lua}); reading the breaker applies it without writing.</li>
 *   <li><b>Tenant scopes of the breaker</b> ({@code includes/tenantScopes.lua}): the same rules on one
 *       tenant's calls alone (one probe of that tenant's at a time). While admission has seen a
 *       second tenant of the integration in the last minute, the failures that reach the threshold
 *       must come from more than one tenant to open the integration's breaker; from one tenant,
 *       they open that tenant's scope instead, and only its items are deferred. Opening the
 *       integration's breaker clears the scopes.</li>
 *   <li><b>Concurrency</b>: one lease per admitted item, expiring after leaseTtl if its worker
 *       never reports; leases (and half-open probes) are taken inside one script, so concurrent workers never exceed the
 *       limit. Full: HANDLER_CONCURRENCY for shortestDeferral.</li>
 *   <li><b>Rate</b>: a one-minute sliding log per handler, one entry per admission (a retried item
 *       counts each time). Full: HANDLER_RATE until the entry ahead of the item leaves the window;
 *       deferred items of one call queue behind each other.</li>
 *   <li><b>Priority inside a handler</b>: items with priority above 1 (manual, queue, schedule) may fill
 *       only limit − ⌈limit/4⌉ of concurrency and of rate (for limits ≥ 2); the rest stays for
 *       webhook items.</li>
 *   <li><b>Tenant window</b>: an exact sliding window of perMinute per minute, whose sorted set also
 *       holds future slots. An item over the limit gets the first time the window has room for it
 *       (at least shortestDeferral away) and keeps that slot; coming back, it is admitted on it
 *       (if it comes back early, e.g. capped by SQS's 15-minute delay, it waits for the rest). A
 *       20,000-item tenant at 1,000/min is spread over 20 minutes with one deferral per item (two
 *       for those beyond 15 minutes). By priority: an item finding the window full takes the
 *       earliest future slot of a lower-priority item of its tenant (a webhook passes the tenant's
 *       manual backlog), which is given a slot behind every reservation and learns so once, at its
 *       old slot; due slots are never taken. So only webhook items skip the window on a slot
 *       their producer reserved. Memory: one entry per admitted item of the last minute plus
 *       one per waiting item.</li>
 *   <li><b>Handler and tenant decide side by side</b> (two slots, one round trip): the item is
 *       admitted only if both admit; paused wins; otherwise the longer delay and its reason, never
 *       under one second (no deferral comes straight back to be deferred again). What
 *       one side took for an item that did not pass the other is given back on the next round
 *       trip; a future tenant slot is kept.</li>
 *   <li><b>Redis unavailable, or a script failing</b>: fail open (see {@link dev.runner.guard.Guard});
 *       the admission says which ({@link dev.runner.guard.FailOpen}), the log tells an outage
 *       (warning) from a bug (error).</li>
 *   <li><b>Size</b>: any number of items; scripts unpack at most 1,000 values at a time (Lua's
 *       stack holds about 8,000) and a tenant's items go in calls of 1,000, all pipelined.</li>
 * </ul>
 *
 * <p>Cost at batch 10, one group, one tenant, both handler limits set: 2 round trips and 21
 * commands server-side including the 3 EVALSHA (BudgetIT counts them).
 */
package dev.runner.guard;
