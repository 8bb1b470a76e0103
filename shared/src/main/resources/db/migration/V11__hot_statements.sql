-- The statements every item batch sends, the claim, the record and the run completion, as
-- functions. Behind RDS Proxy each statement goes unnamed (a named prepared statement would pin the
-- client's session to one database connection), so Postgres parses and plans it on every call; a
-- PL/pgSQL function keeps its statements' plans for the life of the database connection, which the
-- proxy keeps open under many clients, and calling one is a statement cheap to parse and plan.
-- ItemStore and RunStore say what each does. Security invoker (the default): the caller's grants on
-- the tables apply, as they did to the statement, so a role gains nothing by calling one.
-- A change to one is a later migration's create or replace that keeps its arguments and results:
-- the functions of the version before still call it while a deploy rolls out.

create or replace function runner_claim_items(item_ids uuid[], lease_seconds double precision)
    returns table (item_id uuid, attempts integer, payload text, early_ms bigint)
    language plpgsql volatile
as $$
#variable_conflict use_column
begin
    return query
    with ids as (
        select i.item_id, coalesce(r.status = 'cancelled', false) as run_cancelled
        from unnest(item_ids) as i(item_id)
        left join execution_items x on x.item_id = i.item_id left join runs r on r.run_id = x.run_id),
    stopped as (
        update execution_items e set status = 'cancelled', finished_at = now(), updated_at = now()
        from ids
        where e.item_id = ids.item_id and ids.run_cancelled
          and (e.status in ('queued', 'retrying') or (e.status = 'processing' and e.claimed_at < now() - make_interval(secs => lease_seconds)))),
    claimed as (
        update execution_items e set status = 'processing', attempts = e.attempts + 1, claimed_at = now(), updated_at = now()
        from ids
        where e.item_id = ids.item_id and not ids.run_cancelled
          and ((e.status in ('queued', 'retrying') and (e.next_visible_at is null or e.next_visible_at <= now() + interval '1 second'))
               or (e.status = 'processing' and e.claimed_at < now() - make_interval(secs => lease_seconds)))
        returning e.item_id, e.attempts, e.payload::text)
    select c.item_id, c.attempts, c.payload, null::bigint from claimed c
    union all
    select e.item_id, null, null, ceil(extract(epoch from e.next_visible_at - now()) * 1000)::bigint
    from execution_items e join ids on ids.item_id = e.item_id
    where not ids.run_cancelled and e.status in ('queued', 'retrying') and e.next_visible_at > now() + interval '1 second';
end
$$;

create or replace function runner_record_results(item_ids uuid[], statuses text[], errors text[], refunds integer[],
                                                 handoffs boolean[], visible_in integer[])
    returns integer
    language plpgsql volatile
as $$
#variable_conflict use_column
declare
    changed integer;
begin
    update execution_items e set
        status = coalesce(v.status, e.status),
        last_error = coalesce(v.error, e.last_error),
        history = case when v.error is null then e.history
                       else e.history || jsonb_build_array(jsonb_build_object('attempt', e.attempts - v.refund, 'at', now(), 'error', v.error)) end,
        attempts = e.attempts - v.refund,
        claimed_at = case when v.handoff then 'infinity'::timestamptz else e.claimed_at end,
        finished_at = case when v.status = 'succeeded' then now() else e.finished_at end,
        next_visible_at = case when v.visible_in is null then e.next_visible_at
                               else now() + make_interval(secs => v.visible_in) end,
        updated_at = now()
    from unnest(item_ids, statuses, errors, refunds, handoffs, visible_in)
         as v(item_id, status, error, refund, handoff, visible_in)
    where e.item_id = v.item_id
      and (case when v.status is null then e.status in ('queued', 'retrying') else e.status = 'processing' end);
    get diagnostics changed = row_count;
    return changed;
end
$$;

-- Ends every given run whose items have all ended, once, with its final status: cancelled when any
-- item was (a cancelled run whose dead items were redriven ends cancelled again),
-- completed_with_errors when any is dead, else completed. Returns the runs it ended.
create or replace function runner_complete_runs(run_ids uuid[])
    returns table (run_id uuid, tenant_id text, created_at timestamptz, finished_at timestamptz)
    language plpgsql volatile
as $$
#variable_conflict use_column
begin
    return query
    update runs r set
        status = case when exists (select 1 from execution_items x where x.run_id = r.run_id and x.status = 'cancelled') then 'cancelled'
                      when exists (select 1 from execution_items d where d.run_id = r.run_id and d.status = 'dead') then 'completed_with_errors'
                      else 'completed' end,
        finished_at = now(), updated_at = now()
    where r.run_id = any(run_ids) and r.status = 'running'
      and not exists (select 1 from execution_items o
                      where o.run_id = r.run_id and o.status in ('queued', 'processing', 'retrying', 'parked'))
    returning r.run_id, r.tenant_id, r.created_at, r.finished_at;
end
$$;
