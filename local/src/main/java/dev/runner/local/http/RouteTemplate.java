package dev.runner.local.http;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * An HTTP API route: {@code METHOD /literal/{param}/{greedy+}} or {@code $default}. When several
 * routes match, the most specific wins as in API Gateway: literal segments over parameters over a
 * greedy tail, then a named method over {@code ANY}, and {@code $default} last.
 */
public record RouteTemplate(String method, String path, List<Segment> segments) {

    public static final String ANY = "ANY";
    public static final String DEFAULT = "$default";

    /** One segment of a route path. */
    public sealed interface Segment {
        int rank();

        record Literal(String text) implements Segment {
            public int rank() {
                return 0;
            }
        }

        record Parameter(String name) implements Segment {
            public int rank() {
                return 1;
            }
        }

        record Greedy(String name) implements Segment {
            public int rank() {
                return 2;
            }
        }
    }

    /** Most specific first. */
    public static final Comparator<RouteTemplate> MOST_SPECIFIC_FIRST = RouteTemplate::compareSpecificity;

    public RouteTemplate {
        segments = List.copyOf(segments);
    }

    public static RouteTemplate of(String method, String path) {
        String verb = method.toUpperCase(Locale.ROOT);
        if (path.equals(DEFAULT)) {
            return new RouteTemplate(ANY, DEFAULT, List.of());
        }
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("route path must start with '/': " + path);
        }
        List<Segment> segments = new ArrayList<>();
        List<String> parts = split(path);
        for (int i = 0; i < parts.size(); i++) {
            String part = parts.get(i);
            if (part.startsWith("{") && part.endsWith("+}")) {
                if (i != parts.size() - 1) {
                    throw new IllegalArgumentException("a greedy parameter must be the last segment: " + path);
                }
                segments.add(new Segment.Greedy(part.substring(1, part.length() - 2)));
            } else if (part.startsWith("{") && part.endsWith("}")) {
                segments.add(new Segment.Parameter(part.substring(1, part.length() - 1)));
            } else {
                segments.add(new Segment.Literal(part));
            }
        }
        return new RouteTemplate(verb, path, segments);
    }

    public String routeKey() {
        return path.equals(DEFAULT) ? DEFAULT : method + " " + path;
    }

    /** The path parameters when this route takes the request, empty otherwise. */
    public Optional<Map<String, String>> match(String requestMethod, String rawPath) {
        if (path.equals(DEFAULT)) {
            return Optional.of(Map.of());
        }
        if (!method.equals(ANY) && !method.equalsIgnoreCase(requestMethod)) {
            return Optional.empty();
        }
        List<String> parts = split(rawPath);
        Map<String, String> parameters = new LinkedHashMap<>();
        for (int i = 0; i < segments.size(); i++) {
            Segment segment = segments.get(i);
            if (segment instanceof Segment.Greedy greedy) {
                if (i >= parts.size()) {
                    return Optional.empty();
                }
                parameters.put(greedy.name(), decode(String.join("/", parts.subList(i, parts.size()))));
                return Optional.of(parameters);
            }
            if (i >= parts.size()) {
                return Optional.empty();
            }
            String part = parts.get(i);
            switch (segment) {
                case Segment.Literal literal -> {
                    if (!literal.text().equals(decode(part))) {
                        return Optional.empty();
                    }
                }
                case Segment.Parameter parameter -> parameters.put(parameter.name(), decode(part));
                case Segment.Greedy ignored -> throw new IllegalStateException("handled above");
            }
        }
        return parts.size() == segments.size() ? Optional.of(parameters) : Optional.empty();
    }

    private static int compareSpecificity(RouteTemplate a, RouteTemplate b) {
        boolean aDefault = a.path.equals(DEFAULT);
        boolean bDefault = b.path.equals(DEFAULT);
        if (aDefault != bDefault) {
            return aDefault ? 1 : -1;
        }
        int common = Math.min(a.segments.size(), b.segments.size());
        for (int i = 0; i < common; i++) {
            int byRank = Integer.compare(a.segments.get(i).rank(), b.segments.get(i).rank());
            if (byRank != 0) {
                return byRank;
            }
        }
        int byLength = Integer.compare(b.segments.size(), a.segments.size());
        if (byLength != 0) {
            return byLength;
        }
        return Boolean.compare(a.method.equals(ANY), b.method.equals(ANY));
    }

    private static List<String> split(String path) {
        List<String> parts = new ArrayList<>();
        for (String part : path.split("/")) {
            if (!part.isEmpty()) {
                parts.add(part);
            }
        }
        return parts;
    }

    private static String decode(String part) {
        return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
