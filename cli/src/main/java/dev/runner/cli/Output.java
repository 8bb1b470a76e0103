package dev.runner.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectWriter;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a command prints: the API's JSON as it is ({@code --output json}), or text for a person. Whatever the API
 * answered is untrusted text (a handler chose an item's externalId and lastError): control characters in it are
 * shown escaped ({@link #safe}) in text, and escaped in JSON too, so no answer can drive the terminal.
 */
final class Output {

    enum Format { text, json }

    /**
     * JSON with every control character escaped: the C0 ones JSON escapes anyway, and DEL, the C1 ones (U+0080–U+009F,
     * CSI among them) and the bidirectional overrides, which JSON allows raw and a terminal acts on.
     */
    private static final ObjectWriter SAFE_JSON = ApiClient.JSON.writerWithDefaultPrettyPrinter().with(new CharacterEscapes() {
        private final int[] ascii = asciiEscapes();

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return isControl(ch) ? new SerializedString(String.format("\\u%04x", ch)) : null;
        }

        private static int[] asciiEscapes() {
            int[] escapes = CharacterEscapes.standardAsciiEscapesForJSON();
            escapes[0x7f] = CharacterEscapes.ESCAPE_STANDARD;
            return escapes;
        }
    });

    /** A list command's page: how many rows, and where the next page starts (what the last one printed after more:). */
    static final class Paging {
        @picocli.CommandLine.Option(names = "--limit", defaultValue = "20", description = "Rows per page (default ${DEFAULT-VALUE}).")
        int limit;

        @picocli.CommandLine.Option(names = "--cursor", description = "The next page: what the previous one printed after more:.")
        String cursor;

        /** The query's paging parameters, the cursor under the name the route takes ({@code before} or {@code after}). */
        Map<String, String> into(Map<String, String> query, String cursorParameter) {
            query.put("limit", Integer.toString(limit));
            query.put(cursorParameter, cursor);
            return query;
        }
    }

    /** A column of a table: its heading and how a row's value is read. */
    record Column(String heading, Function<JsonNode, String> value) {
        static Column field(String heading, String field) {
            return new Column(heading, row -> text(row.path(field)));
        }
    }

    private final Format format;
    private final PrintWriter out;

    Output(Format format, PrintWriter out) {
        this.format = format;
        this.out = out;
    }

    boolean json() {
        return format == Format.json;
    }

    PrintWriter writer() {
        return out;
    }

    /** The body as JSON, or {@code text} for a person. */
    void show(JsonNode body, Runnable text) {
        if (json()) {
            out.println(pretty(body));
        } else {
            text.run();
        }
        out.flush();
    }

    /** Rows under headings, columns as wide as their widest cell; {@code next} says how to get the next page. */
    void table(JsonNode body, JsonNode rows, List<Column> columns, String empty) {
        show(body, () -> {
            if (rows.isEmpty()) {
                out.println(safe(empty));
                return;
            }
            List<String[]> cells = new ArrayList<>();
            cells.add(columns.stream().map(Column::heading).toArray(String[]::new));
            rows.forEach(row -> cells.add(columns.stream().map(column -> column.value().apply(row)).toArray(String[]::new)));
            int[] widths = new int[columns.size()];
            cells.forEach(line -> {
                for (int i = 0; i < line.length; i++) {
                    widths[i] = Math.max(widths[i], line[i].length());
                }
            });
            for (String[] line : cells) {
                StringBuilder text = new StringBuilder();
                for (int i = 0; i < line.length; i++) {
                    text.append(i == line.length - 1 ? line[i] : String.format("%-" + widths[i] + "s  ", line[i]));
                }
                out.println(text.toString().stripTrailing());
            }
            JsonNode next = body.path("next");
            if (next.isTextual()) {
                out.println("more: pass --cursor " + safe(next.asText()));
            }
        });
    }

    /** Name and value pairs of the body, one a line; as JSON, the body. */
    void facts(JsonNode body, String... namesAndFields) {
        show(body, () -> printFacts(body, namesAndFields));
    }

    /** Name and value pairs, one a line, whatever the format (for text that goes on after them). */
    void printFacts(JsonNode body, String... namesAndFields) {
        for (int i = 0; i < namesAndFields.length; i += 2) {
            fact(namesAndFields[i], text(body.path(namesAndFields[i + 1])));
        }
    }

    void fact(String name, String value) {
        out.printf("%-14s %s%n", name + ":", safe(value));
    }

    /** A line of text for a person, its control characters escaped. */
    void line(String text) {
        out.println(safe(text));
    }

    static String text(JsonNode value) {
        if (value == null || value.isMissingNode() || value.isNull()) {
            return "-";
        }
        return safe(value.isValueNode() ? value.asText() : value.toString());
    }

    /**
     * The text with its control characters escaped, so that it prints as what it is: C0 (newline and tab too, which
     * would break a table's line), DEL, C1 and the bidirectional marks and overrides, as {@code \x1b} (below U+0100) or {@code \\uXXXX} (above).
     */
    static String safe(String text) {
        if (text == null || text.codePoints().noneMatch(Output::isControl)) {
            return text;
        }
        StringBuilder escaped = new StringBuilder(text.length() + 16);
        text.codePoints().forEach(c -> {
            if (!isControl(c)) {
                escaped.appendCodePoint(c);
            } else if (c <= 0xff) {
                escaped.append(String.format("\\x%02x", c));
            } else {
                escaped.append(String.format("\\u%04x", c));
            }
        });
        return escaped.toString();
    }

    private static boolean isControl(int c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f
                || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
    }

    static String pretty(JsonNode body) {
        try {
            return SAFE_JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }
}
