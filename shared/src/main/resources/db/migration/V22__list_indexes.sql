-- Every list the management API serves is answered from an index whose leading columns are its filters
-- (tenant, run, status), in its keyset order (docs/management-api.md, paging), so a page reads what it
-- shows, however many rows other tenants have. Online: built and dropped concurrently, outside a
-- transaction (V22__list_indexes.sql.conf), each statement safe to run again.
--
-- A tenant's items of one status, newest first (GET /items with a tenant key or tenantId): the one index
-- here that every item's insert and status change writes to.
create index concurrently if not exists execution_items_by_tenant on execution_items (tenant_id, status, item_id);
-- Dead items by tenant, run or handler in death order: the dead lists, and the paged redrives' keysets.
-- Partial: written only when an item dies.
create index concurrently if not exists execution_items_dead_by_tenant on execution_items (tenant_id, dlq_at, item_id)
    where status = 'dead';
create index concurrently if not exists execution_items_dead_by_run on execution_items (run_id, dlq_at, item_id)
    where status = 'dead';
create index concurrently if not exists execution_items_dead_by_handler on execution_items (integration_key, handler_key, dlq_at, item_id)
    where status = 'dead';
-- A handler's parked items in id order: a resume unparks them page by page (keyset on item_id).
create index concurrently if not exists execution_items_parked_by_handler on execution_items (integration_key, handler_key, item_id)
    where status = 'parked';
drop index concurrently if exists execution_items_parked;

-- Runs newest first by status, with and without a tenant. A list that names no status merges the ranges of
-- each status (at most limit rows of each), so these two serve every run list and the two they replace go.
create index concurrently if not exists runs_by_tenant_status on runs (tenant_id, status, created_at, run_id);
create index concurrently if not exists runs_by_status on runs (status, created_at, run_id);
drop index concurrently if exists runs_by_tenant;
drop index concurrently if exists runs_newest;

-- Tenant keys newest first, keyset paged, with and without a tenant.
create index concurrently if not exists api_keys_by_tenant_newest on api_keys (tenant_id, created_at, key_id);
create index concurrently if not exists api_keys_newest on api_keys (created_at, key_id);
drop index concurrently if exists api_keys_by_tenant;
