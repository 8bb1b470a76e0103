/**
 * "Why is it waiting?" (docs/resilience.md): for a tenant, each handler's items that wait and the
 * reasons, with counts: its window, the handler's concurrency or rate (its fair share among them),
 * adaptive backoff (a Retry-After, or limits learnt from the partner), the breaker or its scope,
 * a pause, the backlog horizon. Postgres says how many items wait in which state
 * ({@link dev.runner.waiting.WaitingStore}); Redis what holds them now and why they were deferred
 * lately ({@link dev.runner.guard.GuardReadings}); {@link dev.runner.waiting.WaitReasons} puts it together.
 */
package dev.runner.waiting;
