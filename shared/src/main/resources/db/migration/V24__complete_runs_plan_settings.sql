-- V20 replaced runner_complete_runs without V12's settings, and a create or replace without its set
-- clauses drops them: planned once per connection and by key again, as every hot function is
-- (docs/data-model.md, functions).
alter function runner_complete_runs(uuid[]) set plan_cache_mode = force_generic_plan set enable_seqscan = off;
