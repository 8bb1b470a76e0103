/**
 * The backlog horizon (docs/resilience.md): a tenant's items whose tenant-window slot lies further
 * ahead than {@code RUNNER_TENANT_BACKLOG_HORIZON_S} wait in Postgres, unsent, instead of going
 * round through SQS every 15 minutes (its longest delay); the scheduler releases them as their
 * slots come near. {@link dev.runner.backlog.BacklogHorizon} decides at dispatch,
 * {@link dev.runner.backlog.BacklogRelease} releases on each tick, {@link dev.runner.backlog.BacklogStore}
 * is their Postgres.
 */
package dev.runner.backlog;
