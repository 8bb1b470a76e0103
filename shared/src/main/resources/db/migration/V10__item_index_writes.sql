-- Fewer index entries per item: an update that changes status (every claim and record does) is
-- never HOT, so it adds an entry to every index whose predicate the new row matches. These were
-- written on every item's insert and claim (execution_items_open) and success
-- (execution_items_succeeded), for questions other indexes answer:
-- - "is any item of this run still open?" is a range of execution_items_by_status (run_id, status);
--   the charts' open items with failures have a partial index of their own, written only for items
--   that failed at least once; the tiers' waiting items are execution_items_waiting's;
-- - successes per minute come from a BRIN index on finished_at: items end in about the order they
--   are written, so a window of minutes is a few page ranges, and a BRIN index takes no entry per row.
-- Online: built and dropped concurrently, outside a transaction (V10__item_index_writes.sql.conf).
create index concurrently if not exists execution_items_open_retried on execution_items (run_id)
    where status not in ('succeeded', 'dead') and history <> '[]'::jsonb;
create index concurrently if not exists execution_items_finished on execution_items using brin (finished_at);
drop index concurrently if exists execution_items_open;
drop index concurrently if exists execution_items_succeeded;
