-- How an integration type's webhooks are signed (dev.runner.security.WebhookScheme wire names).
alter table integration_types add column webhook_scheme text not null default 'standard';

-- A tenant integration's webhook secrets, current first: more than one only during a rotation,
-- when senders may still sign with the previous one. Never returned by the API, never logged.
alter table tenant_integrations add column webhook_secrets text[] not null default '{}';
update tenant_integrations set webhook_secrets = array[webhook_secret] where webhook_secret is not null;
alter table tenant_integrations drop column webhook_secret;

-- Deliveries by their identity, per tenant integration (not per handler): a webhook's webhook-id
-- (or its provider's signed id, or its body's SHA-256), an ingest message's webhook-id or SQS
-- message id. A delivery seen within the dedup window is not processed again, whichever handler
-- path or queue it came back through. run_id: the run its first arrival made, for the answer.
create table delivery_ids (
    tenant_id       text        not null,
    integration_key text        not null,
    delivery_id     text        not null,
    run_id          uuid,
    received_at     timestamptz not null default now(),
    primary key (tenant_id, integration_key, delivery_id)
);
create index delivery_ids_received on delivery_ids (received_at);

-- Producers of the ingest queue known by their SQS SenderId (an IAM user or role id), and the
-- tenants each may act for. Set through the admin API.
create table ingest_producers (
    sender_id  text        primary key,
    tenants    text[]      not null,
    updated_at timestamptz not null default now()
);
