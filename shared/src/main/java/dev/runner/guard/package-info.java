/**
 * Admission control of the item worker, kept in Redis: pause flags, circuit breakers per
 * integration, concurrency and rate per handler, and a sliding window per tenant.
 *
 * <p>{@link dev.runner.guard.Guard} is the entry point and coordinator: {@code admit} before the
 * handler calls, {@code report} after them, one pipelined Redis round trip each. Each capability is
 * a class with its scripts' codec (arguments into script calls, replies into records):
 * {@code Breaker} (recordOutcome, readBreaker), {@code HandlerLimits} (admitHandler,
 * releaseHandler, the lease doorbell, the pause mirror), {@code AdaptiveLimits} (adaptLimits: AIMD),
 * {@code TenantWindow} (admitTenant, refundTenant, releaseRunSlots, slots reserved at the source),
 * {@code DeferralCounts} (countDeferrals), {@code WaitCounts} (countDeferrals too);
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
 *   <li><b>Concurrency</b>: leases per call, taken inside one script, so concurrent workers never
 *       exceed the limit; each names the tenants its lane's calls carry. Full: HANDLER_CONCURRENCY
 *       until the lease expected back first.</li>
 *   <li><b>Fair shares</b> (includes/fairShare): once a tenant is left waiting for a lease, each
 *       competing tenant's calls in flight stop at limit × weight ÷ the competing weights, unless no
 *       competing tenant is below its own share; alone, a tenant takes every lease.</li>
 *   <li><b>Adaptive limits</b> (AIMD, {@code AdaptiveLimits}): a 429's Retry-After stops its scope
 *       (the handler's, or a tenant's of it when the answers single the tenant out) until then
 *       (ADAPTIVE_STOP); 429s and repeated timeouts cut the scope's effective limits × 0.7 once per
 *       wave; successes raise them one step per probe interval up to the configured ones
 *       (ADAPTIVE_LIMIT while they bind).</li>
 *   <li><b>Rate</b>: a one-minute sliding log per handler, one entry per admission (a retried item
 *       counts each time). Full: HANDLER_RATE until the entry ahead of the item leaves the window;
 *       deferred items of one call queue behind each other.</li>
 *   <li><b>Priority inside a handler</b>: items with priority above 1 (manual, queue, schedule) may fill
 *       only limit − ⌈limit/4⌉ of concurrency and of rate (for limits ≥ 2) while webhook items of the
 *       handler wait or run; the rest stays for them.</li>
 *   <li><b>Tenant window</b>: an exact sliding window of perMinute per minute, whose sorted set also
 *       holds future slots, up to the backlog horizon (beyond it the producer holds the item in
 *       Postgres). A backlog takes three quarters of a window at once, the rest paced; an urgent
 *       item is admitted now when every window holding now has room, or by taking a lower-priority
 *       future slot before the first full window; else any item takes the earliest future slot of a
 *       lower priority, the displaced item going behind every reservation; due slots are never
 *       taken. Memory: one entry per admitted item of the last minute plus one per reserved slot
 *       (a horizon's worth of the limit at most).</li>
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
 * <p>Cost at batch 10, one group, one tenant, both handler limits set, nothing binding: 2 round
 * trips and 21 commands server-side including the 3 EVALSHA (BudgetIT counts them); what each rule
 * costs when it binds: docs/resilience.md.
 */
package dev.runner.guard;
