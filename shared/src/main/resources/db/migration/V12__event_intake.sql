-- The event intake in one statement, and a run of one item completed by the statement that records
-- it. Behind RDS Proxy every statement goes unnamed and is parsed and planned on every call; a
-- PL/pgSQL function keeps its statements' plans for the database connection's life (as V11's do).
-- Security invoker (the default): the caller's grants on the tables apply. A later change is a
-- create or replace that keeps these arguments and results, and their plan_cache_mode (below): the
-- functions of the version before still call them while a deploy rolls out.
--
-- Each function is planned once per connection, and by key:
-- - plan_cache_mode = force_generic_plan: a function's statements take their arrays as parameters,
--   whose length a generic plan guesses (ten rows an unnest) while a custom plan counts it; for the
--   batches these see (one to twenty rows) the guess costs more on paper than the count, so Postgres
--   kept choosing a custom plan, that is, planned every statement again on every call, as if it were
--   sent unnamed (the claim's planning took about twice its execution);
-- - enable_seqscan = off: every statement here finds its rows by key (a primary key, or an item's
--   run), so a sequential scan is only ever chosen where statistics say a table is nearly empty (a
--   new database, before autovacuum's first analyze), and the generic plan, kept for the connection,
--   would go on scanning the table as it grows. IntakePlansIT reads the plans.

-- Accepts deliveries (a webhook, or an ingest batch's messages): each is recorded in delivery_ids
-- unless it was seen within its window, and only a new one makes its run and its items; a delivery
-- is never processed twice, and a new one is new work whatever externalIds it carries. The items'
-- messages are recorded as owed (pending_sends, one row under owed_send_id), and the owed rows of
-- earlier sends that went out (settled_send_ids) are deleted: the settle folded into the next accept.
--
-- Deliveries: tenant_ids, integration_keys, delivery_ids (unique per tenant integration within a
-- call), delivery_runs (the run a new one makes; several deliveries may share one), kept_seconds
-- (how long it is remembered). Runs: run_ids, handler_keys, directions, triggers, priorities.
-- Items: item_ids, item_deliveries (1-based positions in the delivery arrays; an item is its
-- delivery's run's), external_ids (unique per run), payloads (JSON text).
-- Returns each delivery's position, whether it was new, and its run: the one it made, or for a
-- repeat the one its first arrival made (null when that run is gone).
create or replace function runner_accept_deliveries(
        tenant_ids text[], integration_keys text[], delivery_ids text[], delivery_runs uuid[], kept_seconds double precision[],
        run_ids uuid[], handler_keys text[], directions text[], triggers text[], priorities integer[],
        item_ids uuid[], item_deliveries integer[], external_ids text[], payloads text[],
        owed_send_id uuid, settled_send_ids uuid[])
    returns table (delivery integer, fresh boolean, run_id uuid)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    new_deliveries integer[];
begin
    -- In key order, so two calls offering the same deliveries wait for each other rather than deadlock;
    -- a delivery another call is recording waits for that call's end, then counts as seen.
    with offered as (
        select d.tenant_id, d.integration_key, d.delivery_id, d.run_id, d.kept, d.n::integer as n
        from unnest(tenant_ids, integration_keys, delivery_ids, delivery_runs, kept_seconds) with ordinality
             as d(tenant_id, integration_key, delivery_id, run_id, kept, n)),
    recorded as (
        insert into delivery_ids as x (tenant_id, integration_key, delivery_id, run_id, kept_until)
        select o.tenant_id, o.integration_key, o.delivery_id, o.run_id, now() + make_interval(secs => o.kept)
        from offered o order by o.tenant_id, o.integration_key, o.delivery_id
        on conflict (tenant_id, integration_key, delivery_id) do update
            set received_at = now(), run_id = excluded.run_id, kept_until = excluded.kept_until
            -- A row from before kept_until existed was kept for the window this delivery asks for.
            where coalesce(x.kept_until, x.received_at + (excluded.kept_until - now())) < now()
        returning x.tenant_id, x.integration_key, x.delivery_id)
    select coalesce(array_agg(o.n), '{}') into new_deliveries
    from offered o join recorded r
        on r.tenant_id = o.tenant_id and r.integration_key = o.integration_key and r.delivery_id = o.delivery_id;

    if cardinality(new_deliveries) > 0 then
        insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status)
        select distinct on (r.run_id) r.run_id, tenant_ids[f.n], integration_keys[f.n], r.handler_key, r.direction, r.trigger,
               r.priority, 'running'
        from unnest(new_deliveries) as f(n)
        join unnest(run_ids, handler_keys, directions, triggers, priorities) as r(run_id, handler_key, direction, trigger, priority)
            on r.run_id = delivery_runs[f.n]
        order by r.run_id;

        insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, payload)
        select i.item_id, r.run_id, tenant_ids[i.n], integration_keys[i.n], r.handler_key, i.external_id, i.payload::jsonb
        from unnest(item_ids, item_deliveries, external_ids, payloads) as i(item_id, n, external_id, payload)
        join unnest(run_ids, handler_keys) as r(run_id, handler_key) on r.run_id = delivery_runs[i.n]
        where i.n = any(new_deliveries);

        insert into pending_sends (send_id, kind, ids)
        select owed_send_id, 'items', array_agg(i.item_id)
        from unnest(item_ids, item_deliveries) as i(item_id, n)
        where i.n = any(new_deliveries)
        having count(*) > 0;
    end if;

    if cardinality(settled_send_ids) > 0 then
        delete from pending_sends where send_id = any(settled_send_ids);
    end if;

    return query
    select d.n::integer, d.n = any(new_deliveries),
           case when d.n = any(new_deliveries) then d.run_id
                else (select x.run_id from delivery_ids x join runs r on r.run_id = x.run_id
                      where x.tenant_id = d.tenant_id and x.integration_key = d.integration_key and x.delivery_id = d.delivery_id)
           end
    from unnest(tenant_ids, integration_keys, delivery_ids, delivery_runs) with ordinality as d(tenant_id, integration_key, delivery_id, run_id, n);
end
$$;

-- runner_record_results (V11), then the completion of the given runs whose items have all ended,
-- in the same statement (runner_complete_runs, whose final-status rule applies): a run whose last
-- items this call ended needs no statement of its own. Returns the runs it ended. A run it did not
-- end may have items another worker is ending at this moment, whose check cannot see this call's
-- uncommitted rows: the caller checks those once this has committed (RunStore.completeIfDone).
create or replace function runner_record_and_complete(item_ids uuid[], statuses text[], errors text[], refunds integer[],
                                                      handoffs boolean[], visible_in integer[], run_ids uuid[])
    returns table (run_id uuid, tenant_id text, created_at timestamptz, finished_at timestamptz)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
begin
    perform runner_record_results(item_ids, statuses, errors, refunds, handoffs, visible_in);
    if cardinality(run_ids) > 0 then
        return query select c.run_id, c.tenant_id, c.created_at, c.finished_at from runner_complete_runs(run_ids) c;
    end if;
end
$$;

-- The item batch's functions (V11), planned once per connection as these are (above).
alter function runner_claim_items(uuid[], double precision) set plan_cache_mode = force_generic_plan set enable_seqscan = off;
alter function runner_record_results(uuid[], text[], text[], integer[], boolean[], integer[]) set plan_cache_mode = force_generic_plan set enable_seqscan = off;
alter function runner_complete_runs(uuid[]) set plan_cache_mode = force_generic_plan set enable_seqscan = off;
