package dev.runner.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** What a command prints: the API's JSON as it is ({@code --output json}), or text for a person. */
final class Output {

    enum Format { text, json }

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
                out.println(empty);
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
                out.println("more: pass --cursor " + next.asText());
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
        out.printf("%-14s %s%n", name + ":", value);
    }

    static String text(JsonNode value) {
        if (value == null || value.isMissingNode() || value.isNull()) {
            return "-";
        }
        return value.isValueNode() ? value.asText() : value.toString();
    }

    static String pretty(JsonNode body) {
        try {
            return ApiClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }
}
