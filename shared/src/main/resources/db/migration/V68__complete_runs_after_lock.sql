-- runner_complete_runs (V60) locks its runs first and only then looks at their items, in a statement of its own and
-- so with a snapshot taken after the lock. A redrive reopens a run under the same lock (RunStore.reopen): either it
-- committed before the completion's look, which then sees its items open, or the completion ended the run first and
-- the redrive, waiting on the lock, reopens it. One statement for both would look at the items with a snapshot taken
-- before a concurrent redrive committed, see them still dead, and end the run over its queued items for good.
-- Runs are locked in run_id order, as RunStore.reopen locks them, so the two never deadlock.
create or replace function runner_complete_runs(run_ids uuid[])
    returns table (run_id uuid, tenant_id text, created_at timestamptz, finished_at timestamptz)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
begin
    perform 1 from runs l where l.run_id = any(run_ids) and l.status = 'running' order by l.run_id for update;

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
