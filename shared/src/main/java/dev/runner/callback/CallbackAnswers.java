package dev.runner.callback;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.handler.Outcome;
import dev.runner.json.Json;

import java.util.regex.Pattern;

/**
 * A callback's body as an answer (docs/handler-contract.md, callbacks): {@code {"ok": true}}, or
 * {@code {"ok": false, "error": "…", "retryable": false}} (retryable unless it says false, as a batch result).
 */
public final class CallbackAnswers {

    /** The most a callback may send: a small JSON object. */
    public static final int MAX_BODY_BYTES = 16 << 10;
    private static final int ERROR_CHARS = 1000;
    private static final Pattern UNPRINTABLE = Pattern.compile("[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Z}\\s]+");

    private CallbackAnswers() {}

    /** @throws Json.InvalidJsonException not such an object, said so */
    public static Outcome read(byte[] body) {
        if (body.length > MAX_BODY_BYTES) {
            throw new Json.InvalidJsonException("a callback body is at most " + MAX_BODY_BYTES + " bytes");
        }
        JsonNode answer = Json.requireObject(Json.parse(body), "the callback body");
        JsonNode ok = answer.get("ok");
        if (ok == null || !ok.isBoolean()) {
            throw new Json.InvalidJsonException("ok must be true or false");
        }
        if (ok.booleanValue()) {
            return new Outcome.Succeeded();
        }
        JsonNode error = answer.get("error");
        if (error != null && !error.isNull() && !error.isTextual()) {
            throw new Json.InvalidJsonException("error must be a string");
        }
        JsonNode retryable = answer.get("retryable");
        if (retryable != null && !retryable.isNull() && !retryable.isBoolean()) {
            throw new Json.InvalidJsonException("retryable must be true or false");
        }
        String message = error == null || error.isNull() ? "" : clean(error.textValue());
        return new Outcome.Failed(message.isEmpty() ? "the handler's callback reported failure" : message,
                retryable == null || retryable.isNull() || retryable.booleanValue());
    }

    /** One printable line of at most {@link #ERROR_CHARS} characters. */
    private static String clean(String text) {
        String flat = UNPRINTABLE.matcher(text).replaceAll(" ").strip();
        return flat.length() <= ERROR_CHARS ? flat : flat.substring(0, ERROR_CHARS) + "…";
    }
}
