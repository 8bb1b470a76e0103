-- The scheduler's sweeps look for queued runs and items left untouched: keep those scans small.
drop index if exists runs_queued;
create index runs_queued on runs (updated_at) where status = 'queued';
create index execution_items_queued on execution_items (updated_at) where status = 'queued';
