package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.delivery.IngestProducers;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.IntegrationType;
import dev.runner.json.Json;
import dev.runner.log.Log;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code PUT|GET|DELETE /ingest-producers/{senderId}} (docs/ingest.md): the tenants a producer of the ingest queue,
 * known by its SQS SenderId, may act for. Admin only: a binding lets its producer act for tenants.
 */
final class IngestProducerRoutes {

    private static final Log LOG = Log.of(IngestProducerRoutes.class);

    private final IngestProducers producers;

    IngestProducerRoutes(IngestProducers producers) {
        this.producers = producers;
    }

    /** PUT /ingest-producers/{senderId} {tenants:[…]}: replaces the producer's tenants. */
    ApiResponse put(ApiRequest request) {
        String senderId = senderId(request);
        JsonNode body = Json.requireObject(Json.parse(request.body()), "body");
        JsonNode tenants = body.get("tenants");
        if (tenants == null || !tenants.isArray() || tenants.isEmpty() || tenants.size() > IngestProducers.MAX_TENANTS) {
            throw new Json.InvalidJsonException("tenants must be an array of 1 to " + IngestProducers.MAX_TENANTS + " tenant ids");
        }
        Set<String> ids = new LinkedHashSet<>();
        for (int i = 0; i < tenants.size(); i++) {
            JsonNode tenant = tenants.get(i);
            if (!tenant.isTextual()) {
                throw new Json.InvalidJsonException("tenants[" + i + "] must be a string");
            }
            ids.add(IntegrationType.requireKey("tenants[" + i + "]", tenant.asText()));
        }
        IngestProducers.Producer saved = producers.put(new IngestProducers.Producer(senderId, List.copyOf(ids)));
        LOG.info("ingest producer bound", "senderId", senderId, "tenants", saved.tenants().size());
        return ApiResponse.json(200, view(saved));
    }

    /** GET /ingest-producers/{senderId} */
    ApiResponse get(ApiRequest request) {
        String senderId = senderId(request);
        return producers.find(senderId).map(found -> ApiResponse.json(200, view(found)))
                .orElseGet(() -> ApiResponse.error(404, "not_found", "no ingest producer " + senderId));
    }

    /** DELETE /ingest-producers/{senderId}: its messages are unbound from then on (within the consumers' cache TTL). */
    ApiResponse delete(ApiRequest request) {
        String senderId = senderId(request);
        if (!producers.delete(senderId)) {
            return ApiResponse.error(404, "not_found", "no ingest producer " + senderId);
        }
        LOG.info("ingest producer unbound", "senderId", senderId);
        return ApiResponse.json(200, Json.object().put("senderId", senderId).put("deleted", true));
    }

    private static String senderId(ApiRequest request) {
        String senderId = request.pathParameter("senderId");
        if (senderId == null || !IngestProducers.SENDER_ID.matcher(senderId).matches()) {
            throw new Json.InvalidJsonException("senderId must match " + IngestProducers.SENDER_ID.pattern()
                    + " (an IAM user or role id, as SQS reports it in SenderId)");
        }
        return senderId;
    }

    private static ObjectNode view(IngestProducers.Producer producer) {
        ObjectNode node = Json.object().put("senderId", producer.senderId());
        producer.tenants().forEach(node.putArray("tenants")::add);
        return node;
    }
}
