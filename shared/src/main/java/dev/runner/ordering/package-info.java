/**
 * Per-record ordering (docs/item-lifecycle.md, "one record at a time"): a handler with
 * {@code configs.ordered_by_record} has the items of one tenant and externalId called one at a time,
 * in accepted order. An item whose record has an earlier item open waits in Postgres, unclaimed and
 * unsent, spending no attempt; the statement that records the earlier one's end releases it, and the
 * worker sends it with the batch's other messages. {@link dev.runner.ordering.RecordOrder} is the
 * rule and its statements (db/migration/V67__records_functions.sql).
 */
package dev.runner.ordering;
