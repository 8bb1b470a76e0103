package dev.runner.api;

/**
 * Who may call a route. What a tenant key may see inside a {@link #SCOPED} route is decided per
 * resource: another tenant's run, item or integration answers 404, exactly as one that does not
 * exist, so nothing can be enumerated. An {@link #ADMIN} route answers a tenant key 403: the
 * route list is public (docs/management-api.md), so refusing openly hides nothing, and the
 * console can tell "not for this key" from "not offered by this server" (404).
 */
enum Access {
    /** No key: health. */
    PUBLIC,
    /** The admin key or an IAM principal: types, keys, and what every tenant shares (handlers, queues, charts). */
    ADMIN,
    /** Any key; a tenant key sees its own tenant only. */
    SCOPED
}
