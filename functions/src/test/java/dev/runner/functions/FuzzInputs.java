package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * What the outside can send, for the fuzz suites: strings from every corner of Unicode (NUL, lone surrogates,
 * right-to-left marks, very long), JSON of any shape whose field names are the ones Runner reads, JSON broken in
 * the middle, raw bytes, bodies that claim to be base64 and are not.
 */
final class FuzzInputs {

    /** Field names Runner's parsers look for, so that generated JSON reaches past "missing field". */
    static final List<String> FIELDS = List.of("externalId", "tenantId", "integrationKey", "handlerKey", "payload", "id",
            "handlers", "url", "direction", "batch", "configs", "concurrency", "rate_limit_per_minute", "batch_size", "timeout_ms",
            "name", "enabled", "webhookSecret", "webhookSecrets", "webhookScheme", "settings", "schedules", "tenants", "status",
            "limit", "after", "items", "cursor");

    private FuzzInputs() {}

    /** One choice of {@link Arbitraries#frequencyOf} and its weight. */
    static <T> Tuple.Tuple2<Integer, Arbitrary<? extends T>> weighted(int weight, Arbitrary<? extends T> arbitrary) {
        return Tuple.of(weight, arbitrary);
    }

    /** Any text: short and plain most often, then Unicode of any plane, control characters, long runs. */
    static Arbitrary<String> text() {
        return Arbitraries.frequencyOf(
                weighted(5, Arbitraries.strings().alpha().numeric().withChars("-_.:/ ").ofMaxLength(20)),
                weighted(3, Arbitraries.strings().all().ofMaxLength(40)),
                weighted(1, Arbitraries.of("", " ", "\u0000", "\ud800", "\u202e", "../..", "%00", "%2F", "null", "[]", "{}",
                        "' or 1=1 --", "$(reboot)", "\r\n", "𝕽𝖚𝖓𝖓𝖊𝖗")),
                weighted(1, Arbitraries.strings().withChars("aZ9-").ofMinLength(120).ofMaxLength(3000)));
    }

    /** JSON of any shape, depth at most 4, with Runner's field names; numbers from tiny to 1e400. */
    static Arbitrary<JsonNode> json() {
        return json(4);
    }

    private static Arbitrary<JsonNode> json(int depth) {
        Arbitrary<JsonNode> scalar = Arbitraries.oneOf(
                text().map(s -> (JsonNode) JsonNodeFactory.instance.textNode(s)),
                Arbitraries.integers().map(i -> (JsonNode) JsonNodeFactory.instance.numberNode(i)),
                Arbitraries.longs().map(l -> (JsonNode) JsonNodeFactory.instance.numberNode(l)),
                Arbitraries.of(new BigDecimal("1e400"), new BigDecimal("-1e-400"), new BigDecimal("0.1"))
                        .map(d -> (JsonNode) JsonNodeFactory.instance.numberNode(d)),
                Arbitraries.of(new BigInteger("123456789012345678901234567890")).map(b -> (JsonNode) JsonNodeFactory.instance.numberNode(b)),
                Arbitraries.of(true, false).map(b -> (JsonNode) JsonNodeFactory.instance.booleanNode(b)),
                Arbitraries.just(JsonNodeFactory.instance.nullNode()));
        if (depth == 0) {
            return scalar;
        }
        Arbitrary<JsonNode> child = Arbitraries.lazy(() -> json(depth - 1));
        Arbitrary<JsonNode> object = Arbitraries.maps(Arbitraries.oneOf(Arbitraries.of(FIELDS), text()), child).ofMaxSize(6)
                .map(FuzzInputs::object);
        Arbitrary<JsonNode> array = child.list().ofMaxSize(5).map(FuzzInputs::array);
        return Arbitraries.frequencyOf(weighted(3, scalar), weighted(4, object), weighted(2, array));
    }

    /** What a webhook or an ingest message carries when it means well: objects with an externalId of any kind, alone or in an array. */
    static Arbitrary<JsonNode> items() {
        Arbitrary<JsonNode> externalId = Arbitraries.oneOf(
                text().map(s -> (JsonNode) JsonNodeFactory.instance.textNode(s)),
                Arbitraries.longs().map(l -> (JsonNode) JsonNodeFactory.instance.numberNode(l)),
                Arbitraries.just(JsonNodeFactory.instance.nullNode()));
        Arbitrary<JsonNode> item = Combinators.combine(json(2), externalId, Arbitraries.of(true, false)).as((fields, id, withId) -> {
            ObjectNode node = fields.isObject() ? ((ObjectNode) fields).deepCopy() : JsonNodeFactory.instance.objectNode().set("value", fields);
            if (withId) {
                node.set("externalId", id);
            }
            return node;
        });
        return Arbitraries.oneOf(item, item.list().ofMinSize(1).ofMaxSize(6).map(FuzzInputs::array));
    }

    /** A body as bytes: valid JSON, JSON cut short, any text, any bytes (not UTF-8 either), or nothing. */
    static Arbitrary<byte[]> body() {
        return Arbitraries.frequencyOf(
                weighted(5, json().map(Json::write).map(s -> s.getBytes(StandardCharsets.UTF_8))),
                weighted(2, json().map(Json::write).map(s -> s.substring(0, s.length() / 2))
                        .map(s -> s.getBytes(StandardCharsets.UTF_8))),
                weighted(2, text().map(s -> s.getBytes(StandardCharsets.UTF_8))),
                weighted(1, Arbitraries.bytes().array(byte[].class).ofMaxSize(300)),
                weighted(1, Arbitraries.just(new byte[0])));
    }

    /** A body as an HTTP API event carries it: the text, or base64 that may or may not decode. */
    record EventBody(String body, boolean base64) {}

    static Arbitrary<EventBody> eventBody() {
        return Arbitraries.frequencyOf(
                weighted(6, body().map(b -> new EventBody(new String(b, StandardCharsets.UTF_8), false))),
                weighted(2, body().map(b -> new EventBody(Base64.getEncoder().encodeToString(b), true))),
                weighted(1, text().map(s -> new EventBody(s, true))),
                weighted(1, Arbitraries.just(new EventBody(null, false))));
    }

    /** Header or attribute maps: any names (the ones Runner reads among them), any values. */
    static Arbitrary<Map<String, String>> headers(List<String> names) {
        return Arbitraries.maps(Arbitraries.oneOf(Arbitraries.of(names), text()), text()).ofMaxSize(8);
    }

    private static JsonNode object(Map<String, JsonNode> fields) {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        fields.forEach(node::set);
        return node;
    }

    private static JsonNode array(List<JsonNode> elements) {
        ArrayNode node = JsonNodeFactory.instance.arrayNode();
        elements.forEach(node::add);
        return node;
    }
}
