-- Bulk actions (docs/management-api.md, bulk actions): a redrive, a run's cancel, a handler's resume or a tenant
-- integration's enable over any number of items is asked for once, answered at once with what it will do, and
-- done a page at a time: the first page in the request, the rest by the scheduler's tick, within its budget,
-- each page one short transaction with the messages it owes (pending_sends) and its progress.
create table bulk_actions (
    action_id     uuid        primary key,
    kind          text        not null check (kind in ('redrive', 'cancel', 'resume', 'enable')),
    -- The tenant whose items it acts on, when there is one: its keys may read the action. Null: across tenants.
    tenant_id     text,
    -- What it acts on, as its kind reads it (dev.runner.bulk.BulkAction.Target).
    target        jsonb       not null,
    -- One running action per kind and target: asking again is answered with the running one.
    target_key    text        not null,
    status        text        not null check (status in ('running', 'done')),
    -- What it will do, counted when asked (a redrive's at most its limit), and what it has done.
    total         bigint      not null,
    done          bigint      not null default 0,
    -- A redrive takes the items dead when it was asked, no later death.
    asked_at      timestamptz not null default now(),
    -- Where the next page starts (keyset): the last item done, and its dlq_at (redrive) or status (cancel).
    cursor_id     uuid,
    cursor_at     timestamptz,
    cursor_status text,
    updated_at    timestamptz not null default now(),
    finished_at   timestamptz
);
create unique index bulk_actions_running on bulk_actions (target_key) where status = 'running';
-- The tick's next page: the running action touched longest ago.
create index bulk_actions_to_continue on bulk_actions (updated_at) where status = 'running';
-- GET /actions, newest first, with and without a tenant; and the purge of finished ones.
create index bulk_actions_by_tenant on bulk_actions (tenant_id, asked_at, action_id);
create index bulk_actions_newest on bulk_actions (asked_at, action_id);
create index bulk_actions_finished on bulk_actions (finished_at) where finished_at is not null;
