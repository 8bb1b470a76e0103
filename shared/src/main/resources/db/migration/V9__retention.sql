-- Retention (retention.RetentionStore): the scheduler's tick deletes, in bounded batches, finished
-- runs and their items past RUNNER_RETAIN_RUNS, dead items and dead letters past RUNNER_RETAIN_DEAD,
-- and delivery ids past the window each was recorded for.
--
-- Online on a live database: the columns come without a default (a catalog change, no rewrite),
-- under a lock held for an instant and never waited for long (lock_timeout: a migration that cannot
-- get it fails and is run again, instead of queueing every query behind a long transaction); the
-- indexes are built and dropped concurrently (no lock that blocks writes), which is why this script
-- runs outside a transaction (V9__retention.sql.conf) and why each statement may be run again.
set lock_timeout = '5s';

-- A finished run past retention whose items are gone but for dead ones still kept: the newest
-- dlq_at among those. Null: not trimmed yet (or reopened since).
alter table runs add column if not exists kept_dead_at timestamptz;
-- Until when a delivery id is remembered: a delivery whose signature carries no timestamp (GitHub,
-- Shopify) verifies forever once captured, so it is kept for RUNNER_RETAIN_RUNS, others for the
-- dedup window. Null: recorded before this column, kept for the dedup window from received_at.
alter table delivery_ids add column if not exists kept_until timestamptz;

reset lock_timeout;

-- Finished runs in the order they pass retention, until trimmed; then trimmed runs by their newest kept dead item.
create index concurrently if not exists runs_finished on runs (finished_at) where finished_at is not null and kept_dead_at is null;
create index concurrently if not exists runs_kept_dead on runs (kept_dead_at) where kept_dead_at is not null;
create index concurrently if not exists dead_letters_received on dead_letters (received_at);
create index concurrently if not exists delivery_ids_kept_until on delivery_ids (kept_until) where kept_until is not null;
create index concurrently if not exists delivery_ids_unbounded on delivery_ids (received_at) where kept_until is null;
drop index concurrently if exists delivery_ids_received;
