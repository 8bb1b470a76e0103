-- A run's final status says whether all its work was done (docs/data-model.md, runs). A run cancelled
-- before its fetch ended never saw the items its handler still had: fetch_cut says so, set by the cancel
-- and never cleared, so the run ends cancelled whatever becomes of the items it did store (a redrive of
-- its dead ones included). A run cancelled after its fetch ended is cut short only if an item was cancelled.
-- The column comes with a constant default: a catalog change, no rewrite; its lock is held for an instant
-- and never waited for long.
set local lock_timeout = '5s';
alter table runs add column if not exists fetch_cut boolean not null default false;

-- As V11's, the arguments and results kept (the functions of the version before still call it while a
-- deploy rolls out); only the rule for cancelled changed: fetch_cut, or an item cancelled.
create or replace function runner_complete_runs(run_ids uuid[])
    returns table (run_id uuid, tenant_id text, created_at timestamptz, finished_at timestamptz)
    language plpgsql volatile
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
                      where o.run_id = r.run_id and o.status in ('queued', 'processing', 'retrying', 'parked'))
    returning r.run_id, r.tenant_id, r.created_at, r.finished_at;
end
$$;
