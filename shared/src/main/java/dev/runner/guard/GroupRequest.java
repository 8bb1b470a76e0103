package dev.runner.guard;

import java.util.List;

/** The items of one SQS batch that go to the same (integration, handler). */
public record GroupRequest(String integrationKey, String handlerKey, HandlerLimits limits, List<Candidate> items) {

    public GroupRequest {
        if (integrationKey == null || integrationKey.isEmpty()) {
            throw new IllegalArgumentException("integrationKey is empty");
        }
        if (handlerKey == null || handlerKey.isEmpty()) {
            throw new IllegalArgumentException("handlerKey is empty");
        }
        limits = limits == null ? HandlerLimits.UNLIMITED : limits;
        items = List.copyOf(items);
    }
}
