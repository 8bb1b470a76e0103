package dev.runner.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.runner.api.OpenApiDocument;
import dev.runner.json.Json;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Checks an answer of the management API or the webhook route against the OpenAPI document
 * (shared/src/main/resources/api/openapi.json): its status must be one the operation declares, and
 * its JSON body must validate against that response's schema (JSON Schema 2020-12, as OpenAPI 3.1
 * says). An unknown path must be a 404 and a known path with another method a 405, both errors.
 * Used by the tests that call Runner, so what clients are generated from stays what they receive.
 */
public final class OpenApiAnswers {

    /** The document's id for the validator: only a name, never fetched. */
    private static final String DOCUMENT_ID = "https://runner.invalid/openapi.json";
    private static final OpenApiAnswers INSTANCE = new OpenApiAnswers(
            new String(OpenApiDocument.read(OpenApiAnswers.class.getClassLoader()), StandardCharsets.UTF_8));

    private final JsonNode document;
    private final JsonSchemaFactory factory;
    private final Map<String, JsonSchema> schemas = new ConcurrentHashMap<>();

    private OpenApiAnswers(String text) {
        this.document = Json.parse(text);
        this.factory = schemaFactory(Map.of(DOCUMENT_ID, text));
    }

    /** A JSON Schema 2020-12 validator that finds the given documents by their ids, and fetches nothing. */
    public static JsonSchemaFactory schemaFactory(Map<String, String> documentsById) {
        return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012,
                builder -> builder.schemaLoaders(loaders -> loaders.schemas(documentsById)));
    }

    /** The checker of the document on the classpath. */
    public static OpenApiAnswers load() {
        return INSTANCE;
    }

    /** The parsed document. */
    public JsonNode document() {
        return document;
    }

    /** Throws {@link AssertionError} naming what differs when the answer is not one the document describes. */
    public void check(String method, String path, int status, String body) {
        String where = method + " " + path + " → " + status;
        String template = template(path);
        if (template == null) {
            require(status == 404, where + ": no such path in the document, so the answer must be 404");
            requireValid(where, "#/components/schemas/Error", body);
            return;
        }
        JsonNode operation = document.path("paths").path(template).path(method.toLowerCase(Locale.ROOT));
        if (operation.isMissingNode()) {
            require(status == 405, where + ": " + template + " has no " + method + " in the document, so the answer must be 405");
            requireValid(where, "#/components/schemas/Error", body);
            return;
        }
        JsonNode response = operation.path("responses").path(Integer.toString(status));
        require(!response.isMissingNode(), where + ": status not declared for " + method + " " + template
                + " (declared: " + List.copyOf(operation.path("responses").properties().stream().map(Map.Entry::getKey).toList()) + ")");
        if (response.has("$ref")) {
            response = pointer(response.path("$ref").asText());
        }
        JsonNode json = response.path("content").path("application/json");
        if (json.isMissingNode()) {
            return;
        }
        JsonNode schema = json.path("schema");
        requireValid(where, schema.has("$ref") ? schema.path("$ref").asText() : pointerTo(template, method, status), body);
    }

    /** The document's path template for a concrete path; the one with most literal segments wins. */
    String template(String path) {
        String[] segments = split(path);
        String best = null;
        int bestLiterals = -1;
        for (Iterator<String> names = document.path("paths").fieldNames(); names.hasNext(); ) {
            String template = names.next();
            String[] parts = split(template);
            if (parts.length != segments.length) {
                continue;
            }
            int literals = 0;
            boolean matches = true;
            for (int i = 0; i < parts.length && matches; i++) {
                if (parts[i].startsWith("{") && parts[i].endsWith("}")) {
                    matches = !segments[i].isEmpty();
                } else {
                    matches = parts[i].equals(segments[i]);
                    literals++;
                }
            }
            if (matches && literals > bestLiterals) {
                best = template;
                bestLiterals = literals;
            }
        }
        return best;
    }

    private void requireValid(String where, String schemaPointer, String body) {
        JsonNode instance;
        try {
            instance = Json.parse(body == null ? "" : body);
        } catch (Json.InvalidJsonException e) {
            throw new AssertionError(where + ": the body is not JSON: " + body);
        }
        JsonSchema schema = schemas.computeIfAbsent(schemaPointer, p -> factory.getSchema(SchemaLocation.of(DOCUMENT_ID + p)));
        Set<ValidationMessage> errors = schema.validate(instance);
        if (!errors.isEmpty()) {
            List<String> messages = new ArrayList<>();
            errors.forEach(error -> messages.add(error.getInstanceLocation() + ": " + error.getMessage()));
            throw new AssertionError(where + ": the body does not validate against " + schemaPointer + ": " + messages + "\n" + body);
        }
    }

    private JsonNode pointer(String ref) {
        return document.at(ref.substring(1));
    }

    /** A JSON pointer (as a URI fragment) to an inline response schema. */
    private static String pointerTo(String template, String method, int status) {
        String escaped = template.replace("~", "~0").replace("/", "~1").replace("{", "%7B").replace("}", "%7D");
        return "#/paths/" + escaped + "/" + method.toLowerCase(Locale.ROOT) + "/responses/" + status + "/content/application~1json/schema";
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }

    private static String[] split(String path) {
        String trimmed = path;
        int query = trimmed.indexOf('?');
        if (query >= 0) {
            trimmed = trimmed.substring(0, query);
        }
        trimmed = trimmed.replaceAll("^/+", "").replaceAll("/+$", "");
        return trimmed.isEmpty() ? new String[0] : trimmed.split("/", -1);
    }
}
