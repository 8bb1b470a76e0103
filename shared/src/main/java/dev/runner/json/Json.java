package dev.runner.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * JSON through Jackson's tree model only: messages and contracts are read and written field by
 * field by their own records, so nothing depends on reflective data binding (cold start) and
 * every missing or mistyped field gets a message that names it.
 *
 * <p>Trees are read and written with jackson-core's streaming parser and generator, not through an
 * {@code ObjectMapper}: building one and looking up its serializers loads hundreds of databind's
 * classes on every function's cold start, for trees the streaming API reads and writes
 * alike: the same node types (ints as int, long or big integer nodes by size, decimals as double
 * nodes), duplicate keys last-one-wins, and trailing content refused, as
 * {@code readTree} with {@code FAIL_ON_TRAILING_TOKENS} did, with its message.
 */
public final class Json {

    private static final JsonFactory FACTORY = new JsonFactory();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private Json() {}

    public static ObjectNode object() {
        return NODES.objectNode();
    }

    public static ArrayNode array() {
        return NODES.arrayNode();
    }

    /** Parses or throws {@link InvalidJsonException} with a short reason (never the whole input). */
    public static JsonNode parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidJsonException("body is empty");
        }
        try (JsonParser parser = FACTORY.createParser(text)) {
            return readDocument(parser);
        } catch (JsonProcessingException e) {
            throw new InvalidJsonException("not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read JSON from a string", e);
        }
    }

    public static JsonNode parse(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            throw new InvalidJsonException("body is empty");
        }
        try (JsonParser parser = FACTORY.createParser(bytes)) {
            return readDocument(parser);
        } catch (IOException e) {
            throw new InvalidJsonException("not valid JSON: " + (e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage()));
        }
    }

    public static String write(JsonNode node) {
        StringWriter out = new StringWriter();
        try (JsonGenerator generator = FACTORY.createGenerator(out)) {
            write(node, generator);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
        return out.toString();
    }

    public static byte[] writeBytes(JsonNode node) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = FACTORY.createGenerator(out)) {
            write(node, generator);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
        return out.toByteArray();
    }

    /** One value and nothing after it; input of whitespace alone is the missing node. */
    private static JsonNode readDocument(JsonParser parser) throws IOException {
        if (parser.nextToken() == null) {
            return MissingNode.getInstance();
        }
        JsonNode value = read(parser);
        JsonToken trailing = parser.nextToken();
        if (trailing != null) {
            throw new JsonParseException(parser, "Trailing token (of type " + trailing + ") found after value (bound as `"
                    + JsonNode.class.getName() + "`): not allowed as per `DeserializationFeature.FAIL_ON_TRAILING_TOKENS`");
        }
        return value;
    }

    /** The value at the parser's current token (the parser limits nesting to 1,000 levels, so recursion is bounded). */
    private static JsonNode read(JsonParser parser) throws IOException {
        return switch (parser.currentToken()) {
            case START_OBJECT -> {
                ObjectNode object = NODES.objectNode();
                for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                    parser.nextToken();
                    object.replace(name, read(parser));
                }
                yield object;
            }
            case START_ARRAY -> {
                ArrayNode array = NODES.arrayNode();
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    array.add(read(parser));
                }
                yield array;
            }
            case VALUE_STRING -> NODES.textNode(parser.getText());
            case VALUE_NUMBER_INT -> switch (parser.getNumberType()) {
                case INT -> NODES.numberNode(parser.getIntValue());
                case LONG -> NODES.numberNode(parser.getLongValue());
                default -> NODES.numberNode(parser.getBigIntegerValue());
            };
            case VALUE_NUMBER_FLOAT -> NODES.numberNode(parser.getDoubleValue());
            case VALUE_TRUE -> NODES.booleanNode(true);
            case VALUE_FALSE -> NODES.booleanNode(false);
            case VALUE_NULL -> NODES.nullNode();
            // END_ARRAY where a value should be, an unclosed document (null): the parser reports those itself.
            default -> throw new JsonParseException(parser, "Unexpected token (" + parser.currentToken() + ")");
        };
    }

    private static void write(JsonNode node, JsonGenerator generator) throws IOException {
        switch (node.getNodeType()) {
            case OBJECT -> {
                generator.writeStartObject();
                for (var field : node.properties()) {
                    generator.writeFieldName(field.getKey());
                    write(field.getValue(), generator);
                }
                generator.writeEndObject();
            }
            case ARRAY -> {
                generator.writeStartArray();
                for (JsonNode element : node) {
                    write(element, generator);
                }
                generator.writeEndArray();
            }
            case STRING -> generator.writeString(node.textValue());
            case NUMBER -> {
                switch (node.numberType()) {
                    case INT -> generator.writeNumber(node.intValue());
                    case LONG -> generator.writeNumber(node.longValue());
                    case BIG_INTEGER -> generator.writeNumber(node.bigIntegerValue());
                    case FLOAT -> generator.writeNumber(node.floatValue());
                    case DOUBLE -> generator.writeNumber(node.doubleValue());
                    case BIG_DECIMAL -> generator.writeNumber(node.decimalValue());
                }
            }
            case BOOLEAN -> generator.writeBoolean(node.booleanValue());
            case BINARY -> generator.writeBinary(node.binaryValue());
            case NULL, MISSING -> generator.writeNull();
            case POJO -> throw new IllegalStateException("a tree holding a Java object (POJONode) has no JSON of its own: put its fields");
        }
    }
    /** A required text field, or {@link InvalidJsonException} naming it. */
    public static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            throw new InvalidJsonException(field + " is missing");
        }
        if (!value.isTextual() || value.asText().isBlank()) {
            throw new InvalidJsonException(field + " must be a non-empty string");
        }
        return value.asText();
    }

    /** An optional text field: null when absent or JSON null. */
    public static String optionalText(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw new InvalidJsonException(field + " must be a string");
        }
        return value.asText();
    }

    public static int optionalInt(JsonNode node, String field, int fallback) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.canConvertToInt() || !value.isIntegralNumber()) {
            throw new InvalidJsonException(field + " must be an integer");
        }
        return value.intValue();
    }

    public static ObjectNode requireObject(JsonNode node, String what) {
        if (node == null || !node.isObject()) {
            throw new InvalidJsonException(what + " must be a JSON object");
        }
        return (ObjectNode) node;
    }

    /** Input that is not the JSON we expect; its message is safe to show the caller. */
    public static final class InvalidJsonException extends IllegalArgumentException {
        public InvalidJsonException(String message) {
            super(message);
        }
    }
}
