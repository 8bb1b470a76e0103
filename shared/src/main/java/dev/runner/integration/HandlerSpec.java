package dev.runner.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;

import java.net.URI;

/**
 * One handler of an integration type (docs/integration-types.md): where it lives and how hard Runner may push it.
 *
 * @param batch true when the handler serves {@code /process-batch}
 */
public record HandlerSpec(String handlerKey, URI url, Direction direction, boolean batch, Configs configs) {

    /**
     * @param concurrency       handler calls in flight at once across all workers; 0 = unlimited
     * @param ratePerMinute     items per minute; 0 = unlimited
     * @param batchSize         items per {@code /process-batch} call
     * @param timeoutMs         per handler call
     * @param orderedByRecord   items of one tenant and externalId are called one at a time, in accepted order (dev.runner.ordering)
     * @param coalesceMs        webhook and ingest items of one tenant and externalId accepted within this window, or while an
     *                          earlier one waits, become one call with the latest payload (dev.runner.coalescing); 0 = off
     * @param callbackTimeoutMs how long an item answered pending may wait for its callback (docs/handler-contract.md, callbacks)
     * @param pendingHoldsLease whether an item answered pending keeps a concurrency lease while it waits
     */
    public record Configs(int concurrency, int ratePerMinute, int batchSize, int timeoutMs, boolean orderedByRecord, int coalesceMs,
                          long callbackTimeoutMs, boolean pendingHoldsLease) {
        /** One hour: most partner jobs that finish later (imports, exports) finish within it; a longer one says so. */
        public static final long DEFAULT_CALLBACK_TIMEOUT_MS = 3_600_000;
        /** Seven days: a callback URL lives no longer, and a pending item keeps its run open no longer. */
        public static final long MAX_CALLBACK_TIMEOUT_MS = 7 * 86_400_000L;
        public static final Configs DEFAULTS = new Configs(0, 0, 10, 10_000);
        /** The longest coalescing window: SQS delays a message at most 15 minutes. */
        public static final int MAX_COALESCE_MS = 900_000;

        public Configs {
            if (callbackTimeoutMs < 1_000 || callbackTimeoutMs > MAX_CALLBACK_TIMEOUT_MS) {
                throw new IllegalArgumentException("configs.callback_timeout_ms must be 1000.." + MAX_CALLBACK_TIMEOUT_MS + ": " + callbackTimeoutMs);
            }
            if (concurrency < 0) throw new IllegalArgumentException("configs.concurrency < 0: " + concurrency);
            if (ratePerMinute < 0) throw new IllegalArgumentException("configs.rate_limit_per_minute < 0: " + ratePerMinute);
            if (batchSize < 1 || batchSize > 100) throw new IllegalArgumentException("configs.batch_size must be 1..100: " + batchSize);
            if (timeoutMs < 100 || timeoutMs > 900_000) throw new IllegalArgumentException("configs.timeout_ms must be 100..900000: " + timeoutMs);
            if (coalesceMs < 0 || coalesceMs > MAX_COALESCE_MS) {
                throw new IllegalArgumentException("configs.coalesce_ms must be 0.." + MAX_COALESCE_MS + ": " + coalesceMs);
            }
        }

        public Configs(int concurrency, int ratePerMinute, int batchSize, int timeoutMs) {
            this(concurrency, ratePerMinute, batchSize, timeoutMs, false, 0, DEFAULT_CALLBACK_TIMEOUT_MS, false);
        }

        /** Its items are kept by record (ordered or coalesced): they enter the record index when accepted. */
        public boolean keepsRecords() {
            return orderedByRecord || coalesceMs > 0;
        }

        static Configs fromJson(JsonNode node) {
            if (node == null || node.isNull()) {
                return DEFAULTS;
            }
            Json.requireObject(node, "configs");
            return new Configs(
                    Json.optionalInt(node, "concurrency", DEFAULTS.concurrency),
                    Json.optionalInt(node, "rate_limit_per_minute", DEFAULTS.ratePerMinute),
                    Json.optionalInt(node, "batch_size", DEFAULTS.batchSize),
                    Json.optionalInt(node, "timeout_ms", DEFAULTS.timeoutMs),
                    optionalBoolean(node, "ordered_by_record", DEFAULTS.orderedByRecord),
                    Json.optionalInt(node, "coalesce_ms", DEFAULTS.coalesceMs),
                    optionalLong(node, "callback_timeout_ms", DEFAULTS.callbackTimeoutMs),
                    optionalBoolean(node, "pending_holds_lease", DEFAULTS.pendingHoldsLease));
        }

        private static long optionalLong(JsonNode node, String field, long otherwise) {
            JsonNode value = node.get(field);
            if (value == null || value.isNull()) {
                return otherwise;
            }
            if (!value.isIntegralNumber() || !value.canConvertToLong()) {
                throw new Json.InvalidJsonException("configs." + field + " must be an integer");
            }
            return value.longValue();
        }

        private static boolean optionalBoolean(JsonNode node, String field, boolean otherwise) {
            JsonNode value = node.get(field);
            if (value == null || value.isNull()) {
                return otherwise;
            }
            if (!value.isBoolean()) {
                throw new Json.InvalidJsonException("configs." + field + " must be true or false");
            }
            return value.booleanValue();
        }

        ObjectNode toJson() {
            ObjectNode node = Json.object()
                    .put("concurrency", concurrency)
                    .put("rate_limit_per_minute", ratePerMinute)
                    .put("batch_size", batchSize)
                    .put("timeout_ms", timeoutMs)
                    .put("callback_timeout_ms", callbackTimeoutMs)
                    .put("pending_holds_lease", pendingHoldsLease);
            if (orderedByRecord) {
                node.put("ordered_by_record", true);
            }
            if (coalesceMs > 0) {
                node.put("coalesce_ms", coalesceMs);
            }
            return node;
        }
    }

    public static HandlerSpec fromJson(String handlerKey, JsonNode node) {
        Json.requireObject(node, "handlers." + handlerKey);
        String url = Json.text(node, "url");
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new Json.InvalidJsonException("handlers." + handlerKey + ".url is not a URL: " + url);
        }
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new Json.InvalidJsonException("handlers." + handlerKey + ".url must be an http(s) URL: " + url);
        }
        JsonNode batch = node.get("batch");
        if (batch != null && !batch.isBoolean() && !batch.isNull()) {
            throw new Json.InvalidJsonException("handlers." + handlerKey + ".batch must be true or false");
        }
        try {
            return new HandlerSpec(handlerKey, uri,
                    Direction.fromWire(node.path("direction").asText("inbound")),
                    batch != null && batch.asBoolean(),
                    Configs.fromJson(node.get("configs")));
        } catch (IllegalArgumentException e) {
            throw new Json.InvalidJsonException("handlers." + handlerKey + ": " + e.getMessage());
        }
    }

    public ObjectNode toJson() {
        ObjectNode node = Json.object();
        node.put("url", url.toString());
        node.put("direction", direction.wireName());
        node.put("batch", batch);
        node.set("configs", configs.toJson());
        return node;
    }

    /** {@code {url}/fetch}, {@code {url}/process}, {@code {url}/process-batch}. */
    public URI endpoint(String operation) {
        String base = url.toString();
        return URI.create(base.endsWith("/") ? base + operation : base + "/" + operation);
    }
}
