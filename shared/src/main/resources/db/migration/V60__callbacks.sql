-- Callbacks (docs/handler-contract.md, callbacks; docs/item-lifecycle.md): an item whose handler answered pending
-- waits in status pending, holding no claim and no message, until a POST to its callback URL or its wait's end.
-- item_callbacks keeps the one late answer each such attempt gets, the handler's or the timeout's, so a repeated
-- callback is answered with the first one's result and changes nothing, and one after the timeout is refused.
set local lock_timeout = '5s';

-- Added not valid (an instant under its lock); V61 validates it outside this transaction, a scan that stops no writer.
alter table execution_items drop constraint execution_items_status_check;
alter table execution_items add constraint execution_items_status_check
    check (status in ('queued', 'processing', 'succeeded', 'retrying', 'dead', 'parked', 'cancelled', 'pending')) not valid;

-- When the item began to wait and until when it may; the held concurrency lease's member, when it holds one
-- (configs.pending_holds_lease). Catalog changes only: no rewrite.
alter table execution_items add column if not exists pending_since timestamptz;
alter table execution_items add column if not exists callback_due_at timestamptz;
alter table execution_items add column if not exists held_lease text;

-- Its index (the timeout sweep's) is built concurrently by V61.

create table if not exists item_callbacks (
    item_id     uuid        not null references execution_items (item_id) on delete cascade,
    attempt     integer     not null,
    source      text        not null check (source in ('callback', 'timeout')),
    ok          boolean     not null,
    error       text,
    retryable   boolean     not null default true,
    received_at timestamptz not null default now(),
    primary key (item_id, attempt)
);

-- The pending answers of a settled batch: called items (still processing in the attempt their call had) wait.
-- Then, in a statement of its own, so it sees every callback committed meanwhile: those whose callback came
-- before the answer was recorded (the handler called back before its own 202 returned) are taken back to
-- processing and returned with it, for the caller to settle as the answer it is. A callback's statement locks
-- the row first (runner_take_callback): one that commits before the update above is seen here, one that waits
-- for this statement finds the item pending and takes it itself; none is lost, none applied twice.
create or replace function runner_park_pending(p_item_ids uuid[], p_attempts integer[], p_wait_ms bigint[], p_held text[])
    returns table (item_id uuid, attempt integer, ok boolean, error text, retryable boolean)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
begin
    update execution_items e set status = 'pending', pending_since = now(), claimed_at = null,
        callback_due_at = now() + make_interval(secs => v.wait_ms / 1000.0), held_lease = v.held, updated_at = now()
    from unnest(p_item_ids, p_attempts, p_wait_ms, p_held) as v(item_id, attempt, wait_ms, held)
    where e.item_id = v.item_id and e.status = 'processing' and e.attempts = v.attempt;
    return query
    with early as (
        select c.item_id, c.attempt, c.ok, c.error, c.retryable
        from item_callbacks c join unnest(p_item_ids, p_attempts) as v(item_id, attempt)
            on c.item_id = v.item_id and c.attempt = v.attempt),
    taken as (
        update execution_items e set status = 'processing', claimed_at = now(), updated_at = now()
        from early
        where e.item_id = early.item_id and e.attempts = early.attempt and e.status = 'pending'
        returning e.item_id)
    select early.item_id, early.attempt, early.ok, early.error, early.retryable from early join taken on taken.item_id = early.item_id;
end
$$;

-- A callback for an item's attempt, whose URL's signature the caller checked. One transaction: the row locked,
-- then what the callback means (verdict):
--   applied   the attempt was pending and in time: the answer is kept and the item back in processing, for the
--             caller to settle as the handler's answer (the columns name the item's job);
--   early     the attempt's call is still in flight (the callback came before the handler's own 202): the answer is
--             kept, and runner_park_pending applies it when the 202 is recorded;
--   repeated  the attempt already has its late answer (the first callback's, or the timeout's): nothing changes;
--             ok/error/retryable are the first answer's, source says whose;
--   expired   the attempt waited past its callback_due_at (the sweep times it out), or was timed out;
--   ended     the item is in another attempt or ended some other way (cancelled, redriven, …);
--   unknown   no such item (removed by retention, or never stored).
create or replace function runner_take_callback(p_item_id uuid, p_attempt integer, p_ok boolean, p_error text, p_retryable boolean)
    returns table (verdict text, source text, ok boolean, error text, retryable boolean, status text,
                   run_id uuid, tenant_id text, integration_key text, handler_key text, direction text, trigger text,
                   external_id text, held_lease text, waited_ms bigint)
    language plpgsql volatile
as $$
#variable_conflict use_column
declare
    item record;
    prior record;
begin
    select e.*, r.direction as run_direction, r.trigger as run_trigger into item
    from execution_items e join runs r on r.run_id = e.run_id where e.item_id = p_item_id for update of e;
    if not found then
        return query select 'unknown', null::text, null::boolean, null::text, null::boolean, null::text, null::uuid, null::text,
            null::text, null::text, null::text, null::text, null::text, null::text, null::bigint;
        return;
    end if;
    select c.* into prior from item_callbacks c where c.item_id = p_item_id and c.attempt = p_attempt;
    if found then
        return query select case when prior.source = 'timeout' then 'expired' else 'repeated' end, prior.source, prior.ok, prior.error,
            prior.retryable, item.status, item.run_id, item.tenant_id, item.integration_key, item.handler_key, item.run_direction,
            item.run_trigger, item.external_id, null::text, null::bigint;
        return;
    end if;
    if item.attempts = p_attempt and item.status = 'pending' and item.callback_due_at > now() then
        insert into item_callbacks (item_id, attempt, source, ok, error, retryable) values (p_item_id, p_attempt, 'callback', p_ok, p_error, p_retryable);
        update execution_items e set status = 'processing', claimed_at = now(), updated_at = now() where e.item_id = p_item_id;
        return query select 'applied', 'callback', p_ok, p_error, p_retryable, 'processing'::text, item.run_id, item.tenant_id,
            item.integration_key, item.handler_key, item.run_direction, item.run_trigger, item.external_id, item.held_lease,
            (extract(epoch from now() - item.pending_since) * 1000)::bigint;
    elsif item.attempts = p_attempt and item.status = 'processing' then
        insert into item_callbacks (item_id, attempt, source, ok, error, retryable) values (p_item_id, p_attempt, 'callback', p_ok, p_error, p_retryable);
        return query select 'early', 'callback', p_ok, p_error, p_retryable, item.status, item.run_id, item.tenant_id,
            item.integration_key, item.handler_key, item.run_direction, item.run_trigger, item.external_id, null::text, null::bigint;
    else
        return query select case when item.attempts = p_attempt and item.status = 'pending' then 'expired' else 'ended' end,
            null::text, null::boolean, null::text, null::boolean, item.status, item.run_id, item.tenant_id, item.integration_key,
            item.handler_key, item.run_direction, item.run_trigger, item.external_id, null::text, null::bigint;
    end if;
end
$$;

-- At most lim pending items past their callback_due_at, oldest due first, timed out: the timeout kept as the
-- attempt's late answer (a callback after it is refused) and the item back in processing, for the caller to settle
-- as a retryable failure of that attempt. Rows a callback holds are skipped: it decides, or the next tick does.
create or replace function runner_expire_pending(lim integer)
    returns table (run_id uuid, item_id uuid, tenant_id text, integration_key text, handler_key text, direction text,
                   trigger text, external_id text, attempts integer, held_lease text, waited_ms bigint)
    language plpgsql volatile
as $$
#variable_conflict use_column
begin
    return query
    with picked as materialized (
        select p.item_id, p.attempts, p.pending_since from execution_items p
        where p.status = 'pending' and p.callback_due_at <= now()
        order by p.callback_due_at limit lim for update skip locked),
    kept as (
        insert into item_callbacks (item_id, attempt, source, ok, error, retryable)
        select picked.item_id, picked.attempts, 'timeout', false, null, true from picked
        on conflict do nothing),
    taken as (
        update execution_items e set status = 'processing', claimed_at = now(), updated_at = now()
        from picked where e.item_id = picked.item_id
        returning e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, e.external_id, e.attempts, e.held_lease,
            picked.pending_since)
    select t.run_id, t.item_id, t.tenant_id, t.integration_key, t.handler_key, r.direction, r.trigger, t.external_id, t.attempts,
        t.held_lease, (extract(epoch from now() - t.pending_since) * 1000)::bigint
    from taken t join runs r on r.run_id = t.run_id;
end
$$;

-- A run with a pending item is open: as V20's (V24's settings kept), with pending among the statuses that keep it so.
create or replace function runner_complete_runs(run_ids uuid[])
    returns table (run_id uuid, tenant_id text, created_at timestamptz, finished_at timestamptz)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
begin
    return query
    update runs r set
        status = case when r.fetch_cut
                          or exists (select 1 from execution_items x where x.run_id = r.run_id and x.status = 'cancelled') then 'cancelled'
                      when exists (select 1 from execution_items d where d.run_id = r.run_id and d.status = 'dead') then 'completed_with_errors'
                      else 'completed' end,
        finished_at = now(), updated_at = now()
    where r.run_id = any(run_ids) and r.status = 'running'
      and not exists (select 1 from execution_items o
                      where o.run_id = r.run_id and o.status in ('queued', 'processing', 'retrying', 'parked', 'pending'))
    returning r.run_id, r.tenant_id, r.created_at, r.finished_at;
end
$$;
