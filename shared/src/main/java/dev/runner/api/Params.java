package dev.runner.api;

import dev.runner.integration.IntegrationType;
import dev.runner.json.Json;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Request values read and checked, as pure functions: each either returns the value or throws
 * {@link BadRequest} naming the field and what it takes.
 */
final class Params {

    private Params() {}

    static UUID uuid(String field, String value) {
        if (value == null) {
            throw new BadRequest(field + " is missing");
        }
        try {
            UUID parsed = UUID.fromString(value);
            // UUID.fromString accepts short groups ("1-1-1-1-1"); only the canonical form is an id here.
            if (!parsed.toString().equalsIgnoreCase(value)) {
                throw new IllegalArgumentException(value);
            }
            return parsed;
        } catch (IllegalArgumentException e) {
            throw new BadRequest(field + " must be a UUID: " + value);
        }
    }

    static UUID optionalUuid(String field, String value) {
        return value == null ? null : uuid(field, value);
    }

    /** A whole number in {@code min..max}; {@code fallback} when absent. */
    static int intInRange(String field, String value, int fallback, int min, int max) {
        if (value == null) {
            return fallback;
        }
        int parsed;
        try {
            parsed = Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new BadRequest(field + " must be a whole number: " + value);
        }
        if (parsed < min || parsed > max) {
            throw new BadRequest(field + " must be " + min + ".." + max + ": " + value);
        }
        return parsed;
    }

    /** A key (tenant, integration, handler) as everywhere in Runner; null when absent. */
    static String optionalKey(String field, String value) {
        if (value == null) {
            return null;
        }
        try {
            return IntegrationType.requireKey(field, value);
        } catch (Json.InvalidJsonException e) {
            throw new BadRequest(e.getMessage());
        }
    }

    /**
     * One of an enum's values by its wire name; null when absent.
     *
     * @param wireName the name clients use for a value
     */
    static <E extends Enum<E>> E choice(String field, String value, E[] values, Function<E, String> wireName) {
        if (value == null) {
            return null;
        }
        for (E candidate : values) {
            if (wireName.apply(candidate).equals(value)) {
                return candidate;
            }
        }
        throw new BadRequest(field + " must be one of " + Arrays.stream(values).map(wireName).collect(Collectors.joining(", "))
                + ": " + value);
    }

    /** Where a newest-first page ends: an instant and an id, which the next page starts strictly before. */
    record Before(Instant at, UUID id) {}

    /** A cursor of an instant and an id, as {@link #before(Instant, UUID)} made it; null when absent. */
    static Before before(String field, String cursor) {
        if (cursor == null) {
            return null;
        }
        List<String> parts = cursorParts(field, cursor, 2);
        try {
            return new Before(Instant.parse(parts.get(0)), uuid(field, parts.get(1)));
        } catch (java.time.format.DateTimeParseException | BadRequest e) {
            throw new BadRequest(field + " is not a cursor this API gave out: " + cursor);
        }
    }

    /** The cursor of the page after the one that ended at ({@code at}, {@code id}). */
    static String before(Instant at, UUID id) {
        return cursor(at.toString(), id.toString());
    }

    /** An opaque paging cursor from its parts (never containing '|'). */
    static String cursor(String... parts) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(String.join("|", parts).getBytes(StandardCharsets.UTF_8));
    }

    /** The parts of a cursor {@link #cursor} made, exactly {@code count} of them. */
    static List<String> cursorParts(String field, String cursor, int count) {
        String decoded;
        try {
            decoded = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new BadRequest(field + " is not a cursor this API gave out: " + cursor);
        }
        List<String> parts = List.of(decoded.split("\\|", -1));
        if (parts.size() != count) {
            throw new BadRequest(field + " is not a cursor this API gave out: " + cursor);
        }
        return parts;
    }
}
