-- Per-record ordering and coalescing (docs/item-lifecycle.md, "one record at a time"), as functions that wrap the
-- accept, the claim and the record of V11/V12 rather than replace them: those stay the single home of what they
-- do, and a batch with no item of a record-keeping handler calls them as before. Same plan settings as theirs.
--
-- A record is (tenant, integration, handler, externalId). Its open items (queued, processing, retrying, parked,
-- pending; an item handed to the DLQ is ended) are execution_items_by_record's range. Every statement that
-- decides for a record takes the record's transaction-scoped advisory lock first, in key order, and decides in
-- a later statement of the function (a fresh snapshot under READ COMMITTED): so an item that ends and a later
-- item claimed at the same moment cannot both miss each other, which would leave the later one waiting forever.

-- The advisory lock key of a record.
create or replace function runner_record_key(tenant_id text, integration_key text, handler_key text, external_id text)
    returns bigint language sql immutable parallel safe
as $$ select hashtextextended(tenant_id || E'\x1f' || integration_key || E'\x1f' || handler_key || E'\x1f' || external_id, 31) $$;

-- runner_accept_deliveries (V12), then, for the runs whose handler keeps records (run_coalesce_ms > 0 or
-- run_ordered), its new items marked by_record and coalesced: per record, an item already waiting (queued or
-- parked, never called since) takes the latest payload and this call's items of that record end superseded by
-- it; with none waiting, this call's first item of the record waits coalesce_ms before it is due (its message
-- goes delayed) carrying the latest payload, and the others end superseded by it. Runs whose items all ended so
-- are completed. Returns the deliveries' rows as runner_accept_deliveries does (item_id null), then a row per
-- coalesced item (delivery null): superseded_by set for one superseded, wait_ms for one that waits its window.
create or replace function runner_accept_records(
        tenant_ids text[], integration_keys text[], delivery_ids text[], delivery_runs uuid[], kept_seconds double precision[],
        run_ids uuid[], handler_keys text[], directions text[], triggers text[], priorities integer[],
        item_ids uuid[], item_deliveries integer[], external_ids text[], payloads text[],
        owed_send_id uuid, settled_send_ids uuid[], run_coalesce_ms integer[], run_ordered boolean[])
    returns table (delivery integer, fresh boolean, run_id uuid, item_id uuid, superseded_by uuid, wait_ms integer)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    answers_n integer[];
    answers_fresh boolean[];
    answers_run uuid[];
    coalesced_ids uuid[];
    coalesced_by uuid[];
    coalesced_wait integer[];
    ended_runs uuid[];
begin
    perform pg_advisory_xact_lock(k.key) from (
        select distinct runner_record_key(tenant_ids[i.n], integration_keys[i.n], r.handler_key, i.external_id) as key
        from unnest(item_deliveries, external_ids) as i(n, external_id)
        join unnest(run_ids, handler_keys, run_coalesce_ms, run_ordered) as r(run_id, handler_key, coalesce_ms, ordered)
            on r.run_id = delivery_runs[i.n]
        where r.coalesce_ms > 0 or r.ordered
        order by 1) k;

    select array_agg(a.delivery order by a.delivery), array_agg(a.fresh order by a.delivery), array_agg(a.run_id order by a.delivery)
    into answers_n, answers_fresh, answers_run
    from runner_accept_deliveries(tenant_ids, integration_keys, delivery_ids, delivery_runs, kept_seconds, run_ids, handler_keys,
                                  directions, triggers, priorities, item_ids, item_deliveries, external_ids, payloads,
                                  owed_send_id, settled_send_ids) a;

    with mine as materialized (
        select i.item_id, i.k, tenant_ids[i.n] as t, integration_keys[i.n] as ig, r.handler_key as h, i.external_id as x,
               i.payload as p, r.coalesce_ms as c
        from unnest(item_ids, item_deliveries, external_ids, payloads) with ordinality as i(item_id, n, external_id, payload, k)
        join unnest(run_ids, handler_keys, run_coalesce_ms, run_ordered) as r(run_id, handler_key, coalesce_ms, ordered)
            on r.run_id = delivery_runs[i.n]
        join unnest(answers_n, answers_fresh) as a(n, fresh) on a.n = i.n and a.fresh
        where r.coalesce_ms > 0 or r.ordered),
    latest as (
        select distinct on (t, ig, h, x) t, ig, h, x, p from mine where c > 0 order by t, ig, h, x, k desc),
    waited as (
        update execution_items s set payload = l.p::jsonb, updated_at = now()
        from latest l
        where s.by_record and s.tenant_id = l.t and s.integration_key = l.ig and s.handler_key = l.h and s.external_id = l.x
          and s.status in ('queued', 'parked') and s.attempts = 0 and s.item_id <> all(item_ids)
        returning s.item_id, s.tenant_id as t, s.integration_key as ig, s.handler_key as h, s.external_id as x),
    survivors as (
        select distinct on (t, ig, h, x) t, ig, h, x, item_id as survivor from waited order by t, ig, h, x, item_id),
    firsts as (
        select distinct on (t, ig, h, x) t, ig, h, x, item_id as survivor from mine where c > 0 order by t, ig, h, x, k),
    fates as (
        select m.item_id, m.c, l.p,
               case when m.c = 0 then 'ordered' when s.survivor is null and f.survivor = m.item_id then 'waits' else 'superseded' end as fate,
               coalesce(s.survivor, f.survivor) as survivor
        from mine m
        left join survivors s on (s.t, s.ig, s.h, s.x) = (m.t, m.ig, m.h, m.x)
        left join firsts f on (f.t, f.ig, f.h, f.x) = (m.t, m.ig, m.h, m.x)
        left join latest l on (l.t, l.ig, l.h, l.x) = (m.t, m.ig, m.h, m.x)),
    marked as (
        update execution_items e set by_record = true,
            status = case when f.fate = 'superseded' then 'superseded' else e.status end,
            superseded_by = case when f.fate = 'superseded' then f.survivor end,
            finished_at = case when f.fate = 'superseded' then now() else e.finished_at end,
            payload = case when f.fate = 'waits' then f.p::jsonb else e.payload end,
            next_visible_at = case when f.fate = 'waits' then now() + make_interval(secs => f.c / 1000.0) else e.next_visible_at end
        from fates f
        where e.item_id = f.item_id
        returning e.item_id, e.run_id, f.fate, f.survivor, f.c)
    select array_agg(m.item_id), array_agg(case when m.fate = 'superseded' then m.survivor end),
           array_agg(case when m.fate = 'waits' then m.c end),
           array_agg(distinct m.run_id) filter (where m.fate = 'superseded')
    into coalesced_ids, coalesced_by, coalesced_wait, ended_runs
    from marked m where m.fate <> 'ordered';

    if cardinality(ended_runs) > 0 then
        perform runner_complete_runs(ended_runs);
    end if;

    return query
    select a.n, a.fresh, a.run_id, null::uuid, null::uuid, null::integer
    from unnest(answers_n, answers_fresh, answers_run) as a(n, fresh, run_id)
    union all
    select null::integer, null::boolean, null::uuid, c.item_id, c.superseded_by, c.wait_ms
    from unnest(coalesced_ids, coalesced_by, coalesced_wait) as c(item_id, superseded_by, wait_ms)
    where c.item_id is not null;
end
$$;

-- runner_claim_items (V11) for a batch holding items of handlers with ordered_by_record (ordered_ids): each of
-- those with an earlier open item of its record does not go; it waits, unclaimed and without an attempt, its
-- message acknowledged, until the earlier one ends and the record (below) releases it. Its row is due again
-- recheck_seconds later, so the overdue sweep brings it back to this check should a release never come (its
-- predecessor cancelled, or ended by another path). One that waited and may now go is due at once. Returns
-- runner_claim_items' rows (held false), then a row per waiting item (held true).
create or replace function runner_claim_in_record_order(item_ids uuid[], ordered_ids uuid[], lease_seconds double precision,
                                                        recheck_seconds double precision)
    returns table (item_id uuid, attempts integer, payload text, early_ms bigint, held boolean)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    held_ids uuid[];
begin
    perform pg_advisory_xact_lock(k.key) from (
        select distinct runner_record_key(e.tenant_id, e.integration_key, e.handler_key, e.external_id) as key
        from execution_items e where e.item_id = any(ordered_ids) order by 1) k;

    with behind as (
        update execution_items e set record_wait_since = coalesce(e.record_wait_since, now()),
            next_visible_at = now() + make_interval(secs => recheck_seconds), updated_at = now()
        where e.item_id = any(ordered_ids) and e.status in ('queued', 'retrying')
          and exists (select 1 from execution_items o
                      where o.by_record and o.tenant_id = e.tenant_id and o.integration_key = e.integration_key
                        and o.handler_key = e.handler_key and o.external_id = e.external_id and o.item_id < e.item_id
                        and o.status in ('queued', 'processing', 'retrying', 'parked', 'pending')
                        and not (o.status = 'processing' and o.claimed_at = 'infinity'))
        returning e.item_id)
    select coalesce(array_agg(b.item_id), '{}') into held_ids from behind b;

    update execution_items e set record_wait_since = null, next_visible_at = null, updated_at = now()
    where e.item_id = any(ordered_ids) and e.item_id <> all(held_ids) and e.record_wait_since is not null
      and e.status in ('queued', 'retrying');

    return query
    select c.item_id, c.attempts, c.payload, c.early_ms, false
    from runner_claim_items(array(select i from unnest(item_ids) as i where i <> all(held_ids)), lease_seconds) c
    union all
    select h, null::integer, null::text, null::bigint, true from unnest(held_ids) as h;
end
$$;

-- runner_record_and_complete (V12) for a batch holding items of handlers with ordered_by_record (ordered_ids):
-- for each record whose item this call ended (succeeded, or handed to the DLQ), its next open item, when it waits
-- for it, is released (due now) and returned for the caller to send. Returns the runs ended (kind 'completed':
-- run_id, tenant_id, created_at, finished_at) and the items released (kind 'released': run_id … attempts, the
-- columns of an item job).
create or replace function runner_record_in_record_order(item_ids uuid[], statuses text[], errors text[], refunds integer[],
                                                         handoffs boolean[], visible_in integer[], run_ids uuid[], ordered_ids uuid[])
    returns table (run_id uuid, item_id uuid, tenant_id text, integration_key text, handler_key text, direction text,
                   trigger text, external_id text, attempts integer, created_at timestamptz, finished_at timestamptz, kind text)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
begin
    perform pg_advisory_xact_lock(k.key) from (
        select distinct runner_record_key(e.tenant_id, e.integration_key, e.handler_key, e.external_id) as key
        from execution_items e where e.item_id = any(ordered_ids) order by 1) k;

    return query
    select c.run_id, null::uuid, c.tenant_id, null::text, null::text, null::text, null::text, null::text, null::integer,
           c.created_at, c.finished_at, 'completed'
    from runner_record_and_complete(item_ids, statuses, errors, refunds, handoffs, visible_in, run_ids) c;

    return query
    with ended as (
        select distinct e.tenant_id, e.integration_key, e.handler_key, e.external_id
        from execution_items e
        where e.item_id = any(ordered_ids)
          and (e.status in ('succeeded', 'dead', 'cancelled', 'superseded') or (e.status = 'processing' and e.claimed_at = 'infinity'))),
    nexts as (
        select (select o.item_id from execution_items o
                where o.by_record and o.tenant_id = d.tenant_id and o.integration_key = d.integration_key
                  and o.handler_key = d.handler_key and o.external_id = d.external_id
                  and o.status in ('queued', 'processing', 'retrying', 'parked', 'pending')
                  and not (o.status = 'processing' and o.claimed_at = 'infinity')
                order by o.item_id limit 1) as item_id
        from ended d),
    released as (
        update execution_items e set record_wait_since = null, next_visible_at = null, updated_at = now()
        from nexts n
        where e.item_id = n.item_id and e.record_wait_since is not null and e.status in ('queued', 'retrying')
        returning e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, e.external_id, e.attempts)
    select x.run_id, x.item_id, x.tenant_id, x.integration_key, x.handler_key, r.direction, r.trigger, x.external_id,
           x.attempts, null::timestamptz, null::timestamptz, 'released'
    from released x join runs r on r.run_id = x.run_id;
end
$$;
