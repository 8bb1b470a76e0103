-- When each item's message is expected back on its tier: set on every send that delays it
-- (deferral, handler-asked wait, retry backoff). A duplicate that arrives earlier does not claim
-- the item, and the scheduler's sweep re-sends only items whose message is overdue.
alter table execution_items add column next_visible_at timestamptz;
drop index if exists execution_items_queued;
create index execution_items_waiting on execution_items (coalesce(next_visible_at, updated_at))
    where status in ('queued', 'retrying');

-- A run's fetch has one owner at a time: a duplicate or re-sent RunJob finds it leased and leaves it.
alter table runs add column fetch_owner text;
alter table runs add column fetch_lease_until timestamptz;

-- Runs still running whose items have all ended (a completion lost to a crash) are found by the sweep.
create index runs_running on runs (updated_at) where status = 'running';

-- The scheduler's tick forgets deliveries older than the dedup window.
create index webhook_deliveries_received on webhook_deliveries (received_at);
