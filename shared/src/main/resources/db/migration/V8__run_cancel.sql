-- A run can be cancelled: its items not yet called end 'cancelled' and are never called
-- (docs/management-api.md, POST /runs/{runId}/cancel).
alter table runs drop constraint runs_status_check;
alter table runs add constraint runs_status_check
    check (status in ('queued', 'fetching', 'running', 'completed', 'completed_with_errors', 'failed', 'cancelled'));

alter table execution_items drop constraint execution_items_status_check;
alter table execution_items add constraint execution_items_status_check
    check (status in ('queued', 'processing', 'succeeded', 'retrying', 'dead', 'parked', 'cancelled'));

-- A cancelled item has ended, as a succeeded or dead one has: run completion still asks this index only.
drop index execution_items_open;
create index execution_items_open on execution_items (run_id) where status not in ('succeeded', 'dead', 'cancelled');
