-- Flow control (docs/resilience.md).
-- A tenant integration's weight: its share of a handler's concurrency and rate when tenants compete.
alter table tenant_integrations add column if not exists weight integer not null default 1;
alter table tenant_integrations drop constraint if exists tenant_integrations_weight_check;
alter table tenant_integrations add constraint tenant_integrations_weight_check check (weight between 1 and 1000);

-- The backlog horizon: an item whose tenant-window slot lies further ahead than the horizon waits
-- here, unsent, from held_since; the scheduler releases a tenant's held items by priority (the run's,
-- kept here so the release reads one index), then in the order they were held, as its slots come near.
alter table execution_items add column if not exists held_since timestamptz;
alter table execution_items add column if not exists held_priority smallint;
-- Only held items are in it: empty while no tenant is past its horizon. Online (V30__flow_control.sql.conf).
create index concurrently if not exists execution_items_held on execution_items (tenant_id, held_priority, held_since, item_id)
    where held_since is not null and status = 'queued';
