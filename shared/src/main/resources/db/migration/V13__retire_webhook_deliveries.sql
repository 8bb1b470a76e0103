-- Items are no longer deduplicated by externalId (a new delivery carrying a record seen before is an
-- update of it, docs/webhooks.md): webhook_deliveries has no job left. The functions of the version
-- before still insert into it and read what their insert returned while a deploy rolls out, so it is
-- emptied and made to keep nothing rather than dropped: every row such a function inserts is deleted
-- at the end of its statement, after the statement returned it as new, so those functions process
-- every item, as the rule now says. A later release drops the table and its trigger, once no
-- function of a version before this one can run.
--
-- Online: TRUNCATE takes its lock for an instant and is never queued behind a long transaction for
-- long (lock_timeout: a migration that cannot get it fails and is run again).
set lock_timeout = '5s';

-- Security definer: the functions' roles may insert here, but not delete.
create or replace function runner_keep_no_webhook_delivery() returns trigger
    language plpgsql security definer set search_path = public
as $$
begin
    delete from webhook_deliveries w
    where w.tenant_id = new.tenant_id and w.integration_key = new.integration_key
      and w.handler_key = new.handler_key and w.external_id = new.external_id;
    return null;
end
$$;

drop trigger if exists webhook_deliveries_keep_none on webhook_deliveries;
create trigger webhook_deliveries_keep_none after insert on webhook_deliveries
    for each row execute function runner_keep_no_webhook_delivery();

truncate webhook_deliveries;

reset lock_timeout;
