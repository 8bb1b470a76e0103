-- Runner's core schema. Names here are a contract (DESIGN 3.7): tests and tools read them.

create table integration_types (
    integration_key text primary key,
    name            text        not null,
    -- {handlerKey: {url, direction, batch, configs:{concurrency, rate_limit_per_minute, batch_size, timeout_ms}}}
    handlers        jsonb       not null,
    updated_at      timestamptz not null default now()
);

create table tenant_integrations (
    tenant_id       text        not null,
    integration_key text        not null references integration_types (integration_key),
    enabled         boolean     not null default true,
    -- HMAC key of the tenant's webhooks; never returned by the API, never logged.
    webhook_secret  text,
    settings        jsonb       not null default '{}',
    -- {handlerKey: "rate(15 minutes)" | "cron(...)"}; the scheduler reads the schedules table below.
    schedules       jsonb       not null default '{}',
    updated_at      timestamptz not null default now(),
    primary key (tenant_id, integration_key)
);

-- One row per scheduled handler, kept in step with tenant_integrations.schedules.
create table schedules (
    tenant_id       text        not null,
    integration_key text        not null,
    handler_key     text        not null,
    expression      text        not null,
    next_fire_at    timestamptz not null,
    primary key (tenant_id, integration_key, handler_key),
    foreign key (tenant_id, integration_key) references tenant_integrations (tenant_id, integration_key) on delete cascade
);
create index schedules_due on schedules (next_fire_at);

create table runs (
    run_id          uuid        primary key,
    tenant_id       text        not null,
    integration_key text        not null,
    handler_key     text        not null,
    direction       text        not null check (direction in ('inbound', 'outbound')),
    trigger         text        not null check (trigger in ('webhook', 'manual', 'queue', 'schedule')),
    priority        int         not null,
    status          text        not null check (status in ('queued', 'fetching', 'running', 'completed', 'completed_with_errors', 'failed')),
    -- Where the fetch goes on from after a redelivery or a continuation message.
    fetch_cursor    text,
    pages_fetched   int         not null default 0,
    -- tenant/integration/handler/due-instant of the schedule that made it: one run per due time.
    schedule_fire_key text      unique,
    error           text,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    finished_at     timestamptz
);
create index runs_by_tenant on runs (tenant_id, created_at desc);
-- Runs whose RunJob may have been lost between commit and send: the scheduler re-sends them.
create index runs_queued on runs (created_at) where status = 'queued';

create table execution_items (
    item_id         uuid        primary key,
    run_id          uuid        not null references runs (run_id),
    tenant_id       text        not null,
    integration_key text        not null,
    handler_key     text        not null,
    external_id     text        not null,
    payload         jsonb,
    status          text        not null default 'queued'
                    check (status in ('queued', 'processing', 'succeeded', 'retrying', 'dead', 'parked')),
    attempts        int         not null default 0,
    last_error      text,
    -- [{attempt, at, error}] of every failed attempt: a dead item keeps its context.
    history         jsonb       not null default '[]',
    claimed_at      timestamptz,
    dlq_at          timestamptz,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    finished_at     timestamptz,
    unique (run_id, external_id)
);
-- Run completion asks "is any item of this run still open?": this index answers without a scan.
create index execution_items_open on execution_items (run_id) where status not in ('succeeded', 'dead');
create index execution_items_by_status on execution_items (run_id, status, item_id);
create index execution_items_parked on execution_items (integration_key, handler_key) where status = 'parked';

-- SQS bodies Runner could not read, and ingest envelopes it could not accept: kept, never dropped.
create table dead_letters (
    id          bigserial   primary key,
    source      text        not null,
    reason      text        not null,
    body        text        not null,
    attributes  jsonb       not null default '{}',
    received_at timestamptz not null default now()
);

-- Webhook deliveries seen recently, by the element's externalId: a repeat within the window is not processed twice.
create table webhook_deliveries (
    tenant_id       text        not null,
    integration_key text        not null,
    handler_key     text        not null,
    external_id     text        not null,
    received_at     timestamptz not null default now(),
    primary key (tenant_id, integration_key, handler_key, external_id)
);

-- Handlers whose items are parked instead of processed.
create table paused_handlers (
    integration_key text        not null,
    handler_key     text        not null,
    paused_at       timestamptz not null default now(),
    primary key (integration_key, handler_key)
);
