-- Per-record ordering and coalescing (docs/item-lifecycle.md, "one record at a time"): the columns.
-- - by_record: the item belongs to a handler with ordered_by_record or coalesce_ms, so it is in
--   execution_items_by_record (V66) while open; null for every other item, which that index skips;
-- - superseded_by: for an item ended superseded, the item whose call carried its update (or a later one);
-- - record_wait_since: since when the item waits, unsent, for an earlier item of its record to end.
-- Adding nullable columns without a default rewrites nothing.
set lock_timeout = '5s';
alter table execution_items add column if not exists by_record boolean;
alter table execution_items add column if not exists superseded_by uuid;
alter table execution_items add column if not exists record_wait_since timestamptz;

-- superseded: ended by coalescing; pending: waiting for a partner's callback (the callbacks migration's status,
-- named here too so that whichever of the two runs last keeps both). Checked without a scan under the lock, then
-- validated under a lock that lets writes go on.
alter table execution_items drop constraint if exists execution_items_status_check;
alter table execution_items add constraint execution_items_status_check
    check (status in ('queued', 'processing', 'succeeded', 'retrying', 'dead', 'parked', 'cancelled', 'pending', 'superseded')) not valid;
reset lock_timeout;
alter table execution_items validate constraint execution_items_status_check;
