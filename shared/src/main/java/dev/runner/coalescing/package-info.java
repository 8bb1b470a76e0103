/**
 * Coalescing (docs/item-lifecycle.md, "one record at a time"): a handler with {@code configs.coalesce_ms}
 * has the webhook and ingest items of one tenant and externalId that arrive within the window, or while an
 * earlier one waits, become one call with the latest payload. The accept decides it in its own statement
 * ({@code runner_accept_records}, db/migration/V67__records_functions.sql): a record's first update waits
 * the window (its message goes delayed), later ones hand it their payload and end {@code superseded},
 * naming it, with no message of their own. {@link dev.runner.coalescing.Coalescing} turns that answer
 * into what the intake sends.
 */
package dev.runner.coalescing;
