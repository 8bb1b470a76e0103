package dev.runner.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.config.RunnerConfig;
import dev.runner.delivery.DeliveryStore;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pipeline.RunService;
import dev.runner.security.Signature;
import dev.runner.trigger.Trigger;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code POST /webhooks/{tenantId}/{integrationKey}/{handlerKey}} (DESIGN 3.4): checks come cheapest
 * first (size, then who, then signature, then body) and each answers its own 4xx with a JSON
 * {@code {error, message}}; accepted deliveries become one run with trigger webhook, processed on
 * the highest tier.
 */
public final class WebhookService {

    private static final Log LOG = Log.of(WebhookService.class);

    private final RunnerConfig.Webhooks settings;
    private final Integrations integrations;
    private final RunService runs;
    private final DeliveryStore deliveries;
    private final Clock clock;

    public WebhookService(RunnerConfig.Webhooks settings, Integrations integrations, RunService runs, DeliveryStore deliveries,
                          Clock clock) {
        this.settings = settings;
        this.integrations = integrations;
        this.runs = runs;
        this.deliveries = deliveries;
        this.clock = clock;
    }

    public ApiResponse handle(ApiRequest request) {
        try {
            return accept(request);
        } catch (Json.InvalidJsonException e) {
            return ApiResponse.error(400, "malformed_body", e.getMessage());
        } catch (RuntimeException e) {
            // Postgres or SQS unreachable: the sender should retry, and a signed retry is safe (dedup by externalId).
            LOG.error("webhook failed", "path", request.path(), "error", e);
            return ApiResponse.error(503, "unavailable", "Runner cannot take this webhook right now; retry later");
        }
    }

    private ApiResponse accept(ApiRequest request) {
        String tenantId = request.pathParameter("tenantId");
        String integrationKey = request.pathParameter("integrationKey");
        String handlerKey = request.pathParameter("handlerKey");
        if (request.body().length > settings.maxBodyBytes()) {
            return ApiResponse.error(413, "body_too_large", "body is " + request.body().length + " bytes; the limit is " + settings.maxBodyBytes());
        }
        if (tenantId == null || integrationKey == null || handlerKey == null) {
            return ApiResponse.error(404, "not_found", "expected /webhooks/{tenantId}/{integrationKey}/{handlerKey}");
        }
        Optional<TenantIntegration> tenant = integrations.tenantIntegration(tenantId, integrationKey);
        if (tenant.isEmpty() || !tenant.get().enabled()) {
            return ApiResponse.error(404, "unknown_integration", "no enabled integration " + integrationKey + " for tenant " + tenantId);
        }
        Optional<HandlerSpec> handler = integrations.handler(integrationKey, handlerKey);
        if (handler.isEmpty()) {
            return ApiResponse.error(404, "unknown_handler", "integration " + integrationKey + " has no handler " + handlerKey);
        }
        String secret = tenant.get().webhookSecret();
        if (secret == null) {
            return ApiResponse.error(401, "bad_signature", "no webhook secret is configured for this integration");
        }
        Signature.Failure failure = Signature.verify(secret, request.header(Signature.TIMESTAMP_HEADER),
                request.header(Signature.SIGNATURE_HEADER), request.body(), clock.instant(), settings.signatureTolerance());
        if (failure != null) {
            LOG.warn("webhook refused", "tenantId", tenantId, "integrationKey", integrationKey, "why", failure.name());
            return ApiResponse.error(401, "bad_signature", failure.message());
        }
        List<ItemStore.NewItem> items;
        try {
            items = items(Json.parse(request.body()), request.header("x-event-id"));
        } catch (Json.InvalidJsonException e) {
            return ApiResponse.error(400, "malformed_body", e.getMessage());
        }
        RunService.Started started = runs.startWithItems(tenantId, integrationKey, handler.get(), Trigger.WEBHOOK, items,
                (connection, candidates) -> unseen(connection, tenantId, integrationKey, handlerKey, candidates));
        LOG.info("webhook accepted", "tenantId", tenantId, "runId", started.runId(), "items", started.accepted(),
                "duplicates", started.accepted() - started.enqueued());
        return ApiResponse.json(202, Json.object()
                .put("runId", started.runId().toString())
                .put("accepted", started.accepted())
                .put("duplicates", started.accepted() - started.enqueued()));
    }

    /** One object or an array of objects; each identified by externalId, X-Event-Id (single object) or its SHA-256. */
    static List<ItemStore.NewItem> items(JsonNode body, String eventId) {
        List<JsonNode> elements = new ArrayList<>();
        if (body.isObject()) {
            elements.add(body);
        } else if (body.isArray()) {
            body.forEach(elements::add);
            if (elements.isEmpty()) {
                throw new Json.InvalidJsonException("body is an empty array");
            }
        } else {
            throw new Json.InvalidJsonException("body must be a JSON object or an array of objects");
        }
        List<ItemStore.NewItem> items = new ArrayList<>(elements.size());
        for (int i = 0; i < elements.size(); i++) {
            JsonNode element = elements.get(i);
            if (!element.isObject()) {
                throw new Json.InvalidJsonException("element " + i + " is not a JSON object");
            }
            JsonNode externalId = element.get("externalId");
            String id;
            if (externalId != null && (externalId.isTextual() || externalId.isIntegralNumber()) && !externalId.asText().isBlank()) {
                id = externalId.asText();
            } else if (externalId != null && !externalId.isNull()) {
                throw new Json.InvalidJsonException("element " + i + ": externalId must be a non-empty string or an integer");
            } else if (eventId != null && !eventId.isBlank() && elements.size() == 1) {
                id = eventId.strip();
            } else {
                id = "sha256:" + sha256(Json.write(element));
            }
            if (id.length() > 512) {
                throw new Json.InvalidJsonException("element " + i + ": externalId longer than 512 characters");
            }
            items.add(new ItemStore.NewItem(id, element));
        }
        return items;
    }

    /** Records the deliveries and keeps those not seen within the dedup window. One statement. */
    private List<ItemStore.NewItem> unseen(Connection connection, String tenantId, String integrationKey,
                                           String handlerKey, List<ItemStore.NewItem> items) throws SQLException {
        Set<String> fresh = deliveries.recordUnseen(connection, tenantId, integrationKey, handlerKey,
                items.stream().map(ItemStore.NewItem::externalId).toList(), settings.dedupWindow());
        return items.stream().filter(item -> fresh.contains(item.externalId())).toList();
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
