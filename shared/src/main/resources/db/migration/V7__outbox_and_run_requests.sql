-- Messages owed to the queues: written in the transaction that commits the rows a message will
-- name (items of a webhook, ingest, redrive or resume; a manual or scheduled run's RunJob) and
-- deleted once the message is sent. A row still here after a grace is a send that failed or never
-- ran (a process stopped between commit and send), never a message waiting its turn on its tier,
-- so the scheduler's sweep sends it again on every tick, however busy the tier. One row per
-- commit, not per item: ids holds every item or run the commit made.
create table pending_sends (
    send_id  uuid        primary key,
    kind     text        not null check (kind in ('items', 'runs')),
    ids      uuid[]      not null,
    tried_at timestamptz not null default now()
);
create index pending_sends_tried on pending_sends (tried_at);

-- POST /runs with an Idempotency-Key: the run the key's first request made, per tenant, kept for
-- RUNNER_RUN_IDEMPOTENCY_S. A retry with the same key and the same request is answered with that
-- run; the same key with another request is refused. fingerprint: integrationKey/handlerKey asked.
create table run_requests (
    tenant_id       text        not null,
    idempotency_key text        not null,
    fingerprint     text        not null,
    run_id          uuid        not null,
    created_at      timestamptz not null default now(),
    primary key (tenant_id, idempotency_key)
);
create index run_requests_created on run_requests (created_at);
