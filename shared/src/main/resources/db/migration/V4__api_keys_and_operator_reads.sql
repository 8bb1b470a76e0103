-- V3 is the lead's integrity migration (next_visible_at, fetch leases); this one is independent of it.

-- Tenant API keys: each sees and acts on one tenant only. The key is shown once at creation; only
-- its SHA-256 is kept (a 256-bit random key needs no slow hash; see TenantKeys).
create table api_keys (
    key_id      uuid        primary key,
    tenant_id   text        not null,
    name        text        not null,
    key_hash    bytea       not null unique,
    created_at  timestamptz not null default now(),
    revoked_at  timestamptz
);
create index api_keys_by_tenant on api_keys (tenant_id, created_at desc);

-- The management API's lists are newest first with keyset paging on (created_at, run_id): an
-- index in that order serves each page, with or without a tenant.
drop index if exists runs_by_tenant;
create index runs_by_tenant on runs (tenant_id, created_at desc, run_id desc);
create index runs_newest on runs (created_at desc, run_id desc);

-- Dead items across runs, newest dead first (and dead per minute); dead items are few, so is this index.
create index execution_items_dead on execution_items (dlq_at desc, item_id desc) where status = 'dead';
-- Successes per minute for the charts, read from the index alone.
create index execution_items_succeeded on execution_items (finished_at) where status = 'succeeded';
-- Retries per minute read the history of items that failed at least once; of the succeeded ones,
-- only those (few) are indexed here.
create index execution_items_retried_succeeded on execution_items (finished_at)
    where status = 'succeeded' and history <> '[]'::jsonb;
