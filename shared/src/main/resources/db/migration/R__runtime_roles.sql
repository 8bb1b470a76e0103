-- One database role per function (dev.runner.store.DatabaseRole names them), each granted what its
-- job needs and nothing else; the owner (Migrate's login) keeps the schema. Flyway runs this after
-- every versioned migration and again whenever its text changes: each run first revokes everything,
-- so a privilege removed here is removed from the database too, and a new table is reached by no
-- function until it is granted here.
--
-- The roles are created NOLOGIN: passwords live in each function's secret, and Migrate gives each
-- role its login from that secret after migrating (docs/deploy.md). Roles are cluster-wide, so a
-- second database on the same cluster finds them made: creation tolerates a concurrent creator.

-- No login but the owner's creates objects: Postgres before 15 let every role create in public.
revoke create on schema public from public;

do $$
declare
    role_name text;
begin
    foreach role_name in array array['runner_webhook', 'runner_api', 'runner_run_worker', 'runner_item_worker',
                                     'runner_ingest', 'runner_scheduler', 'runner_dead_letter'] loop
        if not exists (select 1 from pg_roles where rolname = role_name) then
            begin
                execute format('create role %I nologin', role_name);
            exception when duplicate_object or unique_violation then
                null;
            end;
        end if;
        execute format('revoke all on all tables in schema public from %I', role_name);
        execute format('revoke all on all sequences in schema public from %I', role_name);
        execute format('grant usage on schema public to %I', role_name);
    end loop;
end
$$;

-- Webhook: finds the tenant's integration, records the delivery, starts the run and its items.
-- Never handler signing keys, API keys, schedules or dead letters.
grant select on integration_types, tenant_integrations to runner_webhook;
grant select, insert, update on webhook_deliveries, delivery_ids, runs, execution_items, run_requests to runner_webhook;
grant select, insert, update, delete on pending_sends to runner_webhook;

-- Ingest: as the webhook, for the producers it admits; what it cannot accept becomes a dead letter.
grant select on integration_types, tenant_integrations, ingest_producers to runner_ingest;
grant select, insert, update on webhook_deliveries, delivery_ids, runs, execution_items, run_requests to runner_ingest;
grant select, insert, update, delete on pending_sends to runner_ingest;
grant select, insert on dead_letters to runner_ingest;
grant usage on sequence dead_letters_id_seq to runner_ingest;

-- Run worker: pages a handler's items into the run (signing its calls), dispatches them.
grant select on integration_types, tenant_integrations, handler_signing_keys to runner_run_worker;
grant select, insert, update on runs, execution_items to runner_run_worker;
grant select, insert, update, delete on pending_sends to runner_run_worker;
grant select, insert on dead_letters to runner_run_worker;
grant usage on sequence dead_letters_id_seq to runner_run_worker;

-- Item worker: calls a handler per item (signing the call) and records the outcome. It parses what
-- handlers answer, so it gets the least: no inserts of runs or items, no tenant secrets beyond reading.
grant select on integration_types, tenant_integrations, handler_signing_keys, paused_handlers to runner_item_worker;
-- Parking locks the pause row (for key share) or the disabled tenant integration (for share) until it commits, so a
-- resume or an enable waits for it; Postgres asks UPDATE on a column for a row lock: only a timestamp's.
grant update (paused_at) on paused_handlers to runner_item_worker;
grant update (updated_at) on tenant_integrations to runner_item_worker;
grant select, update on runs, execution_items to runner_item_worker;
grant select, insert on dead_letters to runner_item_worker;
grant usage on sequence dead_letters_id_seq to runner_item_worker;

-- Scheduler: fires schedules, sweeps stuck runs and items and the outbox, purges old deliveries and requests,
-- and deletes runs, items and dead letters past retention (RetentionStore).
grant select on integration_types, tenant_integrations to runner_scheduler;
grant select, update on schedules to runner_scheduler;
grant select, insert, update, delete on runs, execution_items to runner_scheduler;
grant select, delete on dead_letters to runner_scheduler;
grant select, delete on webhook_deliveries, delivery_ids to runner_scheduler;
grant select, insert, update, delete on run_requests, pending_sends to runner_scheduler;

-- Dead-letter function: records what a queue gave up on, and marks the run or item it belonged to.
grant select, update on runs, execution_items to runner_dead_letter;
grant select, insert on dead_letters to runner_dead_letter;
grant usage on sequence dead_letters_id_seq to runner_dead_letter;

-- Management API: the operator's and tenants' writes and reads. Not the Flyway history.
grant select, insert, update on integration_types, tenant_integrations, runs, execution_items, run_requests,
    api_keys, handler_signing_keys to runner_api;
grant select, insert, update, delete on schedules, paused_handlers, ingest_producers, pending_sends to runner_api;
grant select on dead_letters, webhook_deliveries, delivery_ids to runner_api;

-- Hardening (issue 32): each role reads only what it uses.
-- Tenants' webhook secrets are read by the webhook and ingest checks and written by the management API only: the
-- run worker, the item worker (which parses what handlers answer) and the scheduler read every other column of
-- tenant_integrations, whichever columns later migrations add (granted by name here, after each migration).
do $$
declare
    role_name text;
    readable text;
begin
    select string_agg(quote_ident(column_name), ', ' order by ordinal_position) into readable
    from information_schema.columns
    where table_schema = 'public' and table_name = 'tenant_integrations' and column_name <> 'webhook_secrets';
    foreach role_name in array array['runner_run_worker', 'runner_item_worker', 'runner_scheduler'] loop
        execute format('revoke select on tenant_integrations from %I', role_name);
        execute format('grant select (%s) on tenant_integrations to %I', readable, role_name);
    end loop;
end
$$;

-- Hardening (issue 32): a statement timeout on each role (DatabaseRole.statementTimeout says why each), so no
-- request or batch holds a connection for minutes. On the role, not the connection: every session of it has it,
-- and RDS Proxy pins no session for it (a SET would pin one). The owner, Migrate's login, has none: building an
-- index concurrently on a large table takes as long as it takes.
alter role runner_webhook set statement_timeout = '5s';
alter role runner_api set statement_timeout = '10s';
alter role runner_run_worker set statement_timeout = '10s';
alter role runner_item_worker set statement_timeout = '10s';
alter role runner_ingest set statement_timeout = '10s';
alter role runner_scheduler set statement_timeout = '20s';
alter role runner_dead_letter set statement_timeout = '10s';

-- Hardening (issue 32): bulk actions (V23) are asked for through the management API, which does their first page,
-- and continued by the scheduler's tick, which also forgets finished ones.
-- (Once V23 has made the table: a database migrated to an earlier target runs this too.)
do $$
begin
    if to_regclass('public.bulk_actions') is not null then
        grant select, insert, update on bulk_actions to runner_api;
        grant select, update, delete on bulk_actions to runner_scheduler;
    end if;
end
$$;
-- A tenant integration's enable, continued by the tick, leaves the items of paused handlers parked.
grant select on paused_handlers to runner_scheduler;

-- Callbacks (issue 31, V60): the webhook function takes callbacks (POST /callbacks/{token}) and settles them; the item
-- worker parks pending items and reads callbacks that came before its answer was recorded; the tick times out waits;
-- the API shows them. A cancelled run's pending items are cancelled by the API's first page and the tick's.
do $$
begin
    if to_regclass('public.item_callbacks') is not null then
        grant select, insert on item_callbacks to runner_webhook, runner_scheduler;
        grant select on item_callbacks to runner_item_worker, runner_api;
        grant select, delete on item_callbacks to runner_scheduler;
    end if;
end
$$;
