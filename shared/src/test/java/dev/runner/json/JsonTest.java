package dev.runner.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link Json} reads and writes with jackson-core's streaming API: what it reads and writes, and
 * what it refuses with which message, is what an {@code ObjectMapper}'s {@code readTree} (with
 * {@code FAIL_ON_TRAILING_TOKENS}) and {@code writeValueAsString} did, node types included.
 */
class JsonTest {

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private static final List<String> SAMPLES = List.of(
            "{}", "[]", "null", "true", "false", "0", "-1", "2147483647", "2147483648", "-9223372036854775808",
            "9223372036854775808", "123456789012345678901234567890", "1.5", "-0.0", "1e400", "1E-7", "0.1", "3.0",
            "\"text\"", "\"\\u00e9\\ud83d\\ude00 \\\"quoted\\\" \\n\"", "{\"a\":1,\"a\":2}", "{\"a\":{\"b\":[1,{\"c\":null}],\"d\":[]}}",
            "  {\"spaced\" : [ 1 , 2 ] }  ", "[1,2.5,\"x\",true,null,{},[]]", "{\"\":\"\"}",
            // refused, each with the message it had
            "{} {}", "[] 1", "1 2", "\"a\" \"b\"", "{} x", "{", "[", "{\"a\":", "{\"a\" 1}", "[1,]", "{,}", "]", "}", "nul", "tru",
            "01", "1.", "-", "+1", "NaN", "'single'", "{\"a\":1,}", "\"unterminated", "\"\\x\"", "[".repeat(1001) + "]".repeat(1001),
            "[".repeat(3000), "{\"a\":1}}", "   ", "\n", "\u0000", "/* comment */ 1");

    @Test
    void readsWritesAndRefusesAsAnObjectMapperDid() {
        for (String sample : SAMPLES) {
            assertSameAsMapper(sample);
        }
    }

    @Property(tries = 2000)
    void anyInputReadsAsAnObjectMapperReadIt(@ForAll("jsonish") String input) {
        assertSameAsMapper(input);
    }

    @Test
    void builtTreesAreWrittenAsAnObjectMapperWroteThem() throws JsonProcessingException {
        ObjectNode tree = Json.object();
        tree.put("int", 1).put("long", 1L << 40).put("big", new BigInteger("123456789012345678901234567890"))
                .put("double", 0.1).put("float", 1.5f).put("decimal", new BigDecimal("1.50")).put("short", (short) 7)
                .put("text", "é \"q\" </script>").put("true", true).putNull("null").put("binary", new byte[] {1, 2, 3});
        tree.putArray("array").add(1).add("two").addObject().put("three", 3);
        tree.putObject("empty");

        assertEquals(MAPPER.writeValueAsString(tree), Json.write(tree));
        assertEquals(MAPPER.writeValueAsString(tree), new String(Json.writeBytes(tree), StandardCharsets.UTF_8));
    }

    @Test
    void emptyInputIsRefusedBeforeParsing() {
        assertEquals("body is empty", assertThrows(Json.InvalidJsonException.class, () -> Json.parse("  ")).getMessage());
        assertEquals("body is empty", assertThrows(Json.InvalidJsonException.class, () -> Json.parse(new byte[0])).getMessage());
    }

    @Provide
    Arbitrary<String> jsonish() {
        Arbitrary<String> tokens = Arbitraries.of("{", "}", "[", "]", ",", ":", " ", "\"a\"", "\"b\"", "1", "-2", "3.5e2",
                "99999999999", "true", "null", "x", "\"", "\\");
        return tokens.list().ofMaxSize(12).map(list -> String.join("", list)).filter(s -> !s.isBlank());
    }

    private static void assertSameAsMapper(String input) {
        // The mapper's own two parsers (characters, bytes) word some refusals differently: each is compared with its own.
        if (!input.isBlank()) { // refused before parsing (emptyInputIsRefusedBeforeParsing); as bytes, whitespace is parsed
            assertEquals(outcome(() -> MAPPER.readTree(input)), outcome(() -> Json.parse(input)), "as a string: " + input);
        }
        byte[] bytes = input.getBytes(StandardCharsets.UTF_8);
        assertEquals(outcome(() -> MAPPER.readTree(bytes)), outcome(() -> Json.parse(bytes)), "as bytes: " + input);
    }

    private interface Parse {
        JsonNode parse() throws IOException;
    }

    /** What a parse gave: the tree with its node types and as written, or the refusal as {@link Json} words it. */
    private static String outcome(Parse parse) {
        try {
            JsonNode tree = parse.parse();
            return describe(tree) + " written " + Json.write(tree) + " / " + MAPPER.writeValueAsString(tree);
        } catch (Json.InvalidJsonException e) {
            return "refused: " + e.getMessage();
        } catch (JsonProcessingException e) {
            return "refused: not valid JSON: " + e.getOriginalMessage();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The tree with each node's class: an int read as a long node would be equal in JSON, not in Java. */
    private static String describe(JsonNode node) {
        StringBuilder text = new StringBuilder(node.getClass().getSimpleName());
        if (node.isContainerNode()) {
            text.append('(');
            if (node.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> fields = node.fields(); fields.hasNext(); ) {
                    var field = fields.next();
                    text.append(field.getKey()).append('=').append(describe(field.getValue())).append(';');
                }
            } else {
                node.forEach(element -> text.append(describe(element)).append(';'));
            }
            text.append(')');
        } else {
            text.append('[').append(node.asText()).append(']');
        }
        return text.toString();
    }
}
