package dev.runner.local.template;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A Lambda function of the template, Globals applied and values resolved.
 *
 * @param handler     {@code package.Class::method} or {@code package.Class}
 * @param environment the variables the template gives it (before local endpoints are applied)
 * @param policies    the statements of its role: the template's AWS::IAM::Role it names, or the one SAM
 *                    creates for it (its Policies, and what its event sources add); empty when its Role is
 *                    given any other way, which is not evaluated locally
 */
public record FunctionDefinition(String logicalId, String name, String handler, Duration timeout, int memoryMb,
                                 Map<String, String> environment, List<EventSource> events,
                                 Optional<List<PolicyStatement>> policies) {
    public FunctionDefinition {
        environment = Map.copyOf(environment);
        events = List.copyOf(events);
        policies = policies.map(List::copyOf);
    }

    public String handlerClass() {
        int separator = handler.indexOf("::");
        return separator < 0 ? handler : handler.substring(0, separator);
    }

    public String arn(Intrinsics.Stack stack) {
        return "arn:aws:lambda:" + stack.region() + ":" + stack.accountId() + ":function:" + name;
    }
}
