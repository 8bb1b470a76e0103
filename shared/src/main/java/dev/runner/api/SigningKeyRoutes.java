package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.handler.SigningKey;
import dev.runner.handler.SigningKeyStore;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.IntegrationType;
import dev.runner.integration.Integrations;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.security.StandardWebhooks;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.regex.Pattern;

/**
 * {@code /handlers/{integrationKey}/{handlerKey}/signing-keys} (docs/handler-contract.md): the keys Runner signs one
 * handler's calls with. Admin only, as the handler's type is: a handler serves every tenant of its type. A key is
 * generated here and shown once, in the answer that creates it; no other answer and no log line holds it.
 */
final class SigningKeyRoutes {

    private static final Log LOG = Log.of(SigningKeyRoutes.class);
    /** How long the key a rotation replaces keeps signing, unless the request says: a day to deploy the new key. */
    static final Duration DEFAULT_OVERLAP = Duration.ofDays(1);
    static final int MAX_OVERLAP_SECONDS = 30 * 24 * 3600;
    /** Key ids are UUIDs as Runner makes them (lower-case), or {@link SigningKey#GLOBAL}. */
    private static final Pattern KEY_ID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    private final Integrations integrations;
    private final SigningKeyStore store;
    private final Clock clock;

    SigningKeyRoutes(Integrations integrations, SigningKeyStore store, Clock clock) {
        this.integrations = integrations;
        this.store = store;
        this.clock = clock;
    }

    /**
     * POST …/signing-keys {overlapSeconds?}: a new current key, shown this once; the key it replaces signs until the
     * overlap ends. 409 while two keys sign already.
     */
    ApiResponse create(ApiRequest request, Caller caller) {
        HandlerRef handler = handler(request);
        Duration overlap = overlap(request);
        if (integrations.handlerOrRefresh(handler.integrationKey(), handler.handlerKey()).isEmpty()) {
            return noHandler(handler);
        }
        String secret = StandardWebhooks.newSecret();
        Instant now = now();
        return switch (store.rotate(handler, secret, overlap, now)) {
            case SigningKeyStore.Rotation.Created created -> {
                LOG.info("handler signing key created", "integrationKey", handler.integrationKey(), "handlerKey", handler.handlerKey(),
                        "keyId", created.key().keyId(), "overlapSeconds", overlap.toSeconds());
                ObjectNode body = key(created.key(), now).put("secret", secret);
                body.set("signingKeys", keys(created.keys(), now));
                yield ApiResponse.json(201, body);
            }
            case SigningKeyStore.Rotation.TooManySigning busy -> ApiResponse.error(409, "conflict", "keys "
                    + String.join(" and ", busy.signing().stream().map(SigningKey::keyId).toList()) + " sign this handler's calls already;"
                    + " retire the older one (DELETE …/signing-keys/{keyId}) before rotating again");
            case SigningKeyStore.Rotation.UnknownType unknown -> noHandler(handler);
        };
    }

    /** GET …/signing-keys: every key of the handler with its state; never a secret. */
    ApiResponse list(ApiRequest request, Caller caller) {
        HandlerRef handler = handler(request);
        if (integrations.handlerOrRefresh(handler.integrationKey(), handler.handlerKey()).isEmpty()) {
            return noHandler(handler);
        }
        List<SigningKey> keys = store.list(handler);
        ObjectNode body = Json.object().put("integrationKey", handler.integrationKey()).put("handlerKey", handler.handlerKey());
        body.set("signingKeys", keys(keys, now()));
        return ApiResponse.json(200, body);
    }

    /** DELETE …/signing-keys/{keyId}: a key being replaced stops signing now; the current key is replaced by a rotation instead (409). */
    ApiResponse retire(ApiRequest request, Caller caller) {
        HandlerRef handler = handler(request);
        String keyId = request.pathParameter("keyId");
        if (!SigningKey.GLOBAL.equals(keyId) && !KEY_ID.matcher(keyId == null ? "" : keyId).matches()) {
            // Not a key id at all: nothing to look up (and nothing Postgres could be asked about as text).
            return ApiResponse.error(404, "not_found", "handler " + handler + " has no such signing key");
        }
        Instant now = now();
        return switch (store.retire(handler, keyId, now)) {
            case SigningKeyStore.Retirement.Retired retired -> {
                LOG.info("handler signing key retired", "integrationKey", handler.integrationKey(), "handlerKey", handler.handlerKey(),
                        "keyId", retired.key().keyId());
                yield ApiResponse.json(200, key(retired.key(), now));
            }
            case SigningKeyStore.Retirement.Current current -> ApiResponse.error(409, "conflict", "key " + current.key().keyId()
                    + " is the current key; rotate it instead (POST …/signing-keys, with overlapSeconds 0 to end it at once)");
            case SigningKeyStore.Retirement.NotFound notFound -> ApiResponse.error(404, "not_found",
                    "handler " + handler + " has no signing key " + keyId);
        };
    }

    /** Now as Postgres keeps it (microseconds), so a key retired "now" reads retired in the answer that retires it. */
    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MICROS);
    }

    private static HandlerRef handler(ApiRequest request) {
        return new HandlerRef(IntegrationType.requireKey("integrationKey", request.pathParameter("integrationKey")),
                IntegrationType.requireKey("handlerKey", request.pathParameter("handlerKey")));
    }

    private static Duration overlap(ApiRequest request) {
        if (request.body().length == 0) {
            return DEFAULT_OVERLAP;
        }
        JsonNode body = Json.requireObject(Json.parse(request.body()), "body");
        int seconds = Json.optionalInt(body, "overlapSeconds", (int) DEFAULT_OVERLAP.toSeconds());
        if (seconds < 0 || seconds > MAX_OVERLAP_SECONDS) {
            throw new BadRequest("overlapSeconds must be 0.." + MAX_OVERLAP_SECONDS + ": " + seconds);
        }
        return Duration.ofSeconds(seconds);
    }

    private static ApiResponse noHandler(HandlerRef handler) {
        return ApiResponse.error(404, "not_found", "integration " + handler.integrationKey() + " has no handler " + handler.handlerKey());
    }

    private static ArrayNode keys(List<SigningKey> keys, Instant now) {
        ArrayNode array = Json.array();
        keys.forEach(key -> array.add(key(key, now)));
        return array;
    }

    private static ObjectNode key(SigningKey key, Instant now) {
        ObjectNode node = Json.object();
        node.put("keyId", key.keyId());
        node.put("state", key.state(now).wireName());
        node.put("createdAt", key.createdAt().toString());
        node.put("retiresAt", key.retiresAt() == null ? null : key.retiresAt().toString());
        return node;
    }
}
