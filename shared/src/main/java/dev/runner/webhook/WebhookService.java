package dev.runner.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.config.RunnerConfig;
import dev.runner.delivery.DeliveryIds;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.IntegrationType;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.intake.EventIntake;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.security.StandardWebhooks;
import dev.runner.security.WebhookDecoy;
import dev.runner.security.WebhookScheme;
import dev.runner.security.WebhookVerification;
import dev.runner.security.WebhookVerifier;
import dev.runner.trigger.Trigger;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code POST /webhooks/{tenantId}/{integrationKey}/{handlerKey}} (docs/webhooks.md): checks come cheapest first
 * (size, then who and signature, then handler, then body). Who it is for and how it is signed are answered as one:
 * an unknown tenant, an unknown or disabled integration, one without a secret and a bad signature all get the same
 * 401 and body, after the same work (an HMAC against a decoy secret when there is no real one), so that the answer
 * tells a prober nothing; the reason goes to the log line only. A verified delivery is identified
 * ({@link #deliveryId}) and deduplicated per tenant integration; a new one becomes one run with trigger webhook,
 * processed on the highest tier, whatever externalIds it carries (a record seen before is an update of it), through
 * the event intake's one statement and one send ({@link EventIntake}).
 */
public final class WebhookService {

    private static final Log LOG = Log.of(WebhookService.class);

    /** The route this serves (template.yaml's WebhookFunction, and the OpenAPI document). */
    public static final String ROUTE = "/webhooks/{tenantId}/{integrationKey}/{handlerKey}";

    /** The one answer to a delivery not taken for who it is for or how it is signed; the reason is logged, not told. */
    private static final ApiResponse REFUSED = ApiResponse.error(401, "unauthorized",
            "webhook not accepted: unknown destination, or a missing, stale or wrong signature");

    /** Any of these makes a request worth looking up; without all of them it is refused before any lookup. */
    private static final List<String> SIGNATURE_HEADERS = List.of(StandardWebhooks.SIGNATURE_HEADER,
            WebhookVerifier.GITHUB_SIGNATURE_HEADER, WebhookVerifier.STRIPE_SIGNATURE_HEADER, WebhookVerifier.SHOPIFY_SIGNATURE_HEADER);

    /** Where a delivery is going, as far as the path tells; {@link Unknown} carries why not, for the log. */
    private sealed interface Destination {
        record Known(TenantIntegration tenant, IntegrationType type) implements Destination {}

        record Unknown(String reason) implements Destination {}
    }

    /** A delivery signed with its destination's secret under its type's scheme. */
    private record Taken(WebhookScheme scheme, WebhookVerification.Verified verified) {}

    private final RunnerConfig.Webhooks settings;
    private final Integrations integrations;
    private final EventIntake intake;
    private final Clock clock;
    /** Checks every delivery, so that a refusal costs the same work whether its destination exists or not. */
    private final WebhookDecoy decoy = new WebhookDecoy();

    public WebhookService(RunnerConfig.Webhooks settings, Integrations integrations, EventIntake intake, Clock clock) {
        this.settings = settings;
        this.integrations = integrations;
        this.intake = intake;
        this.clock = clock;
    }

    public ApiResponse handle(ApiRequest request) {
        try {
            return accept(request);
        } catch (Json.InvalidJsonException e) {
            return ApiResponse.error(400, "malformed_body", e.getMessage());
        } catch (RuntimeException e) {
            // Postgres or SQS unreachable: the sender should retry, and a signed retry is safe (dedup by delivery id).
            LOG.error("webhook failed", "tenantId", loggable(request.pathParameter("tenantId")),
                    "integrationKey", loggable(request.pathParameter("integrationKey")), "error", e);
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
            return ApiResponse.error(404, "not_found", "expected " + ROUTE);
        }
        String webhookId = request.header(StandardWebhooks.ID_HEADER);
        String badId = webhookId == null ? null : DeliveryIds.problem(StandardWebhooks.ID_HEADER, webhookId);
        if (badId != null) {
            return ApiResponse.error(400, "bad_request", badId);
        }
        if (SIGNATURE_HEADERS.stream().allMatch(name -> isBlank(request.header(name)))) {
            logRefusal(tenantId, integrationKey, "no signature header");
            return REFUSED;
        }
        Optional<Taken> taken = check(request, tenantId, integrationKey);
        if (taken.isEmpty()) {
            return REFUSED;
        }
        Optional<HandlerSpec> handler = integrations.handlerOrRefresh(integrationKey, handlerKey);
        if (handler.isEmpty()) {
            return ApiResponse.error(404, "unknown_handler", "integration " + integrationKey + " has no handler " + loggable(handlerKey));
        }
        JsonNode body = Json.parse(request.body());
        List<ItemStore.NewItem> items = items(body, request.header("x-event-id"));
        if (items.size() > settings.maxItemsPerDelivery()) {
            return ApiResponse.error(413, "too_many_items", "the body carries " + items.size() + " items; the limit is "
                    + settings.maxItemsPerDelivery() + " per delivery (RUNNER_MAX_ITEMS_PER_DELIVERY)");
        }
        WebhookScheme scheme = taken.get().scheme();
        String deliveryId = deliveryId(scheme, taken.get().verified(), body, request.body());
        EventIntake.Accepted accepted = intake.accept(Trigger.WEBHOOK, List.of(new EventIntake.Delivery(tenantId, integrationKey,
                handler.get(), deliveryId, settings.deliveryWindow(scheme), items))).getFirst();
        LOG.info("webhook accepted", "tenantId", tenantId, "integrationKey", integrationKey, "deliveryId", deliveryId,
                "runId", accepted.runId(), "items", accepted.accepted(), "duplicates", accepted.duplicates(), "repeat", !accepted.fresh());
        return ApiResponse.json(202, Json.object()
                .put("runId", accepted.runId() == null ? null : accepted.runId().toString())
                .put("accepted", accepted.accepted())
                .put("duplicates", accepted.duplicates()));
    }

    /** Who a delivery is for and how it is signed, answered as one: taken, or empty (the reason logged). */
    private Optional<Taken> check(ApiRequest request, String tenantId, String integrationKey) {
        String refusal;
        switch (destination(tenantId, integrationKey)) {
            case Destination.Known known -> {
                switch (verify(known.type().webhookScheme(), known.tenant().webhookSecrets(), request)) {
                    case WebhookVerification.Verified verified -> {
                        return Optional.of(new Taken(known.type().webhookScheme(), verified));
                    }
                    case WebhookVerification.Refused refused -> refusal = "signature " + refused.reason().name().toLowerCase(Locale.ROOT);
                }
            }
            case Destination.Unknown unknown -> {
                verify(null, List.of(), request); // the work a bad signature of the request's scheme costs, so timing tells nothing
                refusal = unknown.reason();
            }
        }
        logRefusal(tenantId, integrationKey, refusal);
        return Optional.empty();
    }

    /** Through the decoy: every scheme the request speaks costs its verification, known destination or not (WebhookDecoy). */
    private WebhookVerification verify(WebhookScheme scheme, List<String> secrets, ApiRequest request) {
        return decoy.verify(scheme, secrets, request::header, request.body(), clock.instant(), settings.signatureTolerance());
    }

    /** Cached lookups only (misses too): a flood of made-up destinations reaches Postgres at most once per TTL each. */
    private Destination destination(String tenantId, String integrationKey) {
        if (!IntegrationType.KEY.matcher(tenantId).matches() || !IntegrationType.KEY.matcher(integrationKey).matches()) {
            return new Destination.Unknown("malformed tenant or integration key");
        }
        Optional<TenantIntegration> tenant = integrations.tenantIntegrationWithSecretsCached(tenantId, integrationKey);
        if (tenant.isEmpty()) {
            return new Destination.Unknown("no such tenant integration");
        }
        if (!tenant.get().enabled()) {
            return new Destination.Unknown("integration disabled");
        }
        if (tenant.get().webhookSecrets().isEmpty()) {
            return new Destination.Unknown("no webhook secret");
        }
        Optional<IntegrationType> type = integrations.type(integrationKey);
        return type.<Destination>map(t -> new Destination.Known(tenant.get(), t))
                .orElseGet(() -> new Destination.Unknown("no such integration type"));
    }

    private static void logRefusal(String tenantId, String integrationKey, String reason) {
        LOG.warn("webhook refused", "tenantId", loggable(tenantId), "integrationKey", loggable(integrationKey), "why", reason);
    }

    /**
     * The delivery's identity, deduplicated per tenant integration: what its scheme signs, so that a capture sent
     * again under another id header is still the same delivery. Standard Webhooks signs {@code webhook-id}; Stripe
     * signs the body, whose {@code id} is the event's; GitHub and Shopify sign the body alone, so its SHA-256 is
     * the identity (their delivery id headers are not signed).
     */
    static String deliveryId(WebhookScheme scheme, WebhookVerification.Verified verified, JsonNode body, byte[] rawBody) {
        String id = switch (scheme) {
            case STANDARD -> verified.deliveryId();
            case STRIPE -> body.isObject() && body.path("id").isTextual() ? body.path("id").asText() : null;
            case GITHUB, SHOPIFY -> null;
        };
        if (id == null || id.isBlank() || DeliveryIds.problem("id", id) != null) {
            return "sha256:" + sha256(rawBody);
        }
        return id;
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
                id = "sha256:" + sha256(Json.write(element).getBytes(StandardCharsets.UTF_8));
            }
            String problem = DeliveryIds.problem("externalId", id);
            if (problem != null) {
                throw new Json.InvalidJsonException("element " + i + ": " + problem);
            }
            items.add(new ItemStore.NewItem(id, element));
        }
        return items;
    }

    /** A path part as a log field: keys as they are, anything else (made up by a prober) cut short. */
    private static String loggable(String value) {
        if (value == null || IntegrationType.KEY.matcher(value).matches()) {
            return value;
        }
        return "(" + value.length() + " chars, not a key)";
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
