-- runner_complete_runs (V60) locks the runs that look done and only then decides, in a statement of its own and so
-- with a snapshot taken after the lock. A redrive reopens a run under the same lock (RunStore.reopen): either it
-- committed before the decision, which then sees its items open, or the completion ended the run first and the
-- redrive, waiting on the lock, reopens it. Deciding in the statement that looked would use a snapshot taken before a
-- concurrent redrive committed, see its items still dead, and end the run over its queued items for good.
-- Only runs that look done are locked (workers ending items of one run at once do not queue behind each other), in
-- run_id order, as RunStore.reopen locks them, so the two never deadlock. A run that ends between the look and the
-- decision is left to whoever ended it: its own look sees it done.
create or replace function runner_complete_runs(run_ids uuid[])
    returns table (run_id uuid, tenant_id text, created_at timestamptz, finished_at timestamptz)
    language plpgsql volatile
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    done_ids uuid[];
begin
    select coalesce(array_agg(l.run_id), '{}') into done_ids from (
        select c.run_id from runs c
        where c.run_id = any(run_ids) and c.status = 'running'
          and not exists (select 1 from execution_items o
                          where o.run_id = c.run_id and o.status in ('queued', 'processing', 'retrying', 'parked', 'pending'))
        order by c.run_id for update) l;
    if cardinality(done_ids) = 0 then
        return;
    end if;

    return query
    update runs r set
        status = case when r.fetch_cut
                          or exists (select 1 from execution_items x where x.run_id = r.run_id and x.status = 'cancelled') then 'cancelled'
                      when exists (select 1 from execution_items d where d.run_id = r.run_id and d.status = 'dead') then 'completed_with_errors'
                      else 'completed' end,
        finished_at = now(), updated_at = now()
    where r.run_id = any(done_ids) and r.status = 'running'
      and not exists (select 1 from execution_items o
                      where o.run_id = r.run_id and o.status in ('queued', 'processing', 'retrying', 'parked', 'pending'))
    returning r.run_id, r.tenant_id, r.created_at, r.finished_at;
end
$$;
