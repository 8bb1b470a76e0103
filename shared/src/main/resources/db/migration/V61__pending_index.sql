-- V60's online half, outside a transaction (its .sql.conf), so the table takes writes meanwhile: the status check
-- validated (a scan under a lock that stops no writer), and the timeout sweep's index (runner_expire_pending):
-- pending items by when their wait ends, built concurrently.
alter table execution_items validate constraint execution_items_status_check;
create index concurrently if not exists execution_items_pending_due on execution_items (callback_due_at) where status = 'pending';
