-- What a tenant key may not undo (docs/integration-types.md, who decides what). operator_disabled: an admin
-- saved the tenant integration disabled, and only an admin enables it again. open_to_tenants: tenant keys may
-- subscribe to the type themselves (true, as before this column) or only the operator subscribes tenants to it.
-- Constant defaults: catalog changes, no rewrite; each lock is held for an instant and never waited for long.
set local lock_timeout = '5s';
alter table tenant_integrations add column if not exists operator_disabled boolean not null default false;
alter table integration_types add column if not exists open_to_tenants boolean not null default true;
