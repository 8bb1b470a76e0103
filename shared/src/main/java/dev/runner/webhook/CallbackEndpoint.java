package dev.runner.webhook;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.callback.CallbackAnswers;
import dev.runner.callback.CallbackUrls;
import dev.runner.handler.Outcome;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pipeline.CallbackCompletion;
import dev.runner.pipeline.CallbackCompletion.Completion;

import java.util.UUID;

/**
 * {@code POST /callbacks/{token}} (docs/handler-contract.md, callbacks): the signed URL is the credential, so the route
 * takes no API key. The token's signature is checked first (an unknown or forged one is a 404 that says nothing of any
 * item), then its expiry (410), then the body (400); then the callback is taken.
 */
public final class CallbackEndpoint {

    private static final Log LOG = Log.of(CallbackEndpoint.class);

    private static final ApiResponse UNKNOWN = ApiResponse.error(404, "unknown_callback",
            "no such callback: the URL is not one Runner gave out, or not all of it was sent");

    private final CallbackUrls urls;
    private final CallbackCompletion completion;

    public CallbackEndpoint(CallbackUrls urls, CallbackCompletion completion) {
        this.urls = urls;
        this.completion = completion;
    }

    public ApiResponse handle(ApiRequest request) {
        if (!(urls.verify(request.pathParameter("token")) instanceof CallbackUrls.Verdict.Signed signed)) {
            LOG.warn("callback refused: unknown or forged token");
            return UNKNOWN;
        }
        if (signed.expired()) {
            return expired(signed.itemId(), signed.attempt(), "its URL expired at " + signed.expiresAt());
        }
        Outcome answer;
        try {
            answer = CallbackAnswers.read(request.body());
        } catch (Json.InvalidJsonException e) {
            return ApiResponse.error(400, "malformed_body", e.getMessage());
        }
        try {
            return answer(completion.complete(signed, answer));
        } catch (RuntimeException e) {
            // Nothing was taken (one transaction): the handler should call back again.
            LOG.error("callback failed", "itemId", signed.itemId(), "attempt", signed.attempt(), "error", e);
            return ApiResponse.error(503, "unavailable", "Runner cannot take this callback right now; retry later");
        }
    }

    private static ApiResponse answer(Completion completion) {
        return switch (completion) {
            case Completion.Applied applied -> ApiResponse.json(200, taken(applied.itemId(), applied.attempt(), "applied", applied.answer())
                    .put("waitedMs", applied.waited().toMillis()));
            case Completion.Early early -> ApiResponse.json(202, taken(early.itemId(), early.attempt(), "accepted", early.answer()));
            case Completion.Repeated repeated -> ApiResponse.json(200, taken(repeated.itemId(), repeated.attempt(), "repeated", repeated.first()));
            case Completion.Expired expired -> expired(expired.itemId(), expired.attempt(),
                    "the attempt waited past its handler's configs.callback_timeout_ms and failed as a timeout");
            case Completion.Ended ended -> ApiResponse.error(410, "callback_attempt_ended", "item " + ended.itemId()
                    + " is no longer waiting in attempt " + ended.attempt() + " (it is " + ended.status() + "); this callback changes nothing");
            case Completion.Unknown unknown -> UNKNOWN;
        };
    }

    private static ApiResponse expired(UUID itemId, int attempt, String why) {
        return ApiResponse.error(410, "callback_expired", "callback for item " + itemId + " attempt " + attempt + " refused: " + why
                + "; it changes nothing");
    }

    /** The answer to a callback taken: the item, the attempt, and the result that counts for it. */
    private static ObjectNode taken(UUID itemId, int attempt, String status, Outcome result) {
        ObjectNode body = Json.object().put("itemId", itemId.toString()).put("attempt", attempt).put("status", status);
        ObjectNode counted = body.putObject("result");
        switch (result) {
            case Outcome.Succeeded ok -> counted.put("ok", true);
            case Outcome.Failed failed -> counted.put("ok", false).put("error", failed.error()).put("retryable", failed.retryable());
            case Outcome.Deferred deferred -> throw new IllegalStateException("a callback's answer is never a deferral");
            case Outcome.Pending pending -> throw new IllegalStateException("a callback's answer is never pending");
        }
        return body;
    }
}
