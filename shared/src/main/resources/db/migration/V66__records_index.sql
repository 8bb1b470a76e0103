-- The open items of each record of the handlers that keep records (by_record), in accepted (id) order: what
-- the claim asks ("is an earlier item of this record still open?"), the accept asks ("which item of this
-- record waits, to take a later update?") and the record asks ("which item of this record goes next?").
-- Items of other handlers never enter it. Online (V66__records_index.sql.conf).
create index concurrently if not exists execution_items_by_record
    on execution_items (tenant_id, integration_key, handler_key, external_id, item_id)
    where by_record and status in ('queued', 'processing', 'retrying', 'parked', 'pending');
