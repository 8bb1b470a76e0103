package dev.runner.local.template;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A Lambda function of the template, Globals applied and values resolved.
 *
 * @param handler     {@code package.Class::method} or {@code package.Class}
 * @param environment the variables the template gives it (before local endpoints are applied)
 */
public record FunctionDefinition(String logicalId, String name, String handler, Duration timeout, int memoryMb,
                                 Map<String, String> environment, List<EventSource> events) {
    public FunctionDefinition {
        environment = Map.copyOf(environment);
        events = List.copyOf(events);
    }

    public String handlerClass() {
        int separator = handler.indexOf("::");
        return separator < 0 ? handler : handler.substring(0, separator);
    }

    public String arn(Intrinsics.Stack stack) {
        return "arn:aws:lambda:" + stack.region() + ":" + stack.accountId() + ":function:" + name;
    }
}
