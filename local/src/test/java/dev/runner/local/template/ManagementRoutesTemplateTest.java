package dev.runner.local.template;

import dev.runner.api.ManagementApi;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * template.yaml routes to ApiFunction exactly the routes ManagementApi serves, in both modes of ManagementAuth, and
 * every API stage that reaches a function is throttled. No I/O but the file.
 */
class ManagementRoutesTemplateTest {

    @Test
    void everyManagementRouteHasItsHttpApiRouteAndNoOther() {
        Set<String> served = new TreeSet<>();
        var api = new ManagementApi("k", ManagementApi.Backend.none(Clock.systemUTC()));
        api.routeTable().forEach(route -> served.add(route.substring(0, route.lastIndexOf(' '))));
        for (String mode : new String[] {"apiKey", "iam"}) {
            assertEquals(served, templateRoutes(Map.of("ManagementAuth", mode)), "ManagementAuth=" + mode);
        }
    }

    /**
     * The HTTP API (webhooks, bearer-key management routes) and the IAM management API's stage each answer a flood
     * with 429 before it costs an invocation: their default route settings carry a burst and a rate limit.
     */
    @Test
    @SuppressWarnings("unchecked")
    void everyApiStageIsThrottled() throws Exception {
        Map<String, Object> resources = (Map<String, Object>) CloudFormationYaml.parse(Files.readString(templatePath())).get("Resources");
        Set<String> stages = new TreeSet<>();
        Set<String> unthrottled = new TreeSet<>();
        resources.forEach((logicalId, resource) -> {
            Map<String, Object> definition = (Map<String, Object>) resource;
            Object type = definition.get("Type");
            if ("AWS::Serverless::HttpApi".equals(type) || "AWS::ApiGatewayV2::Stage".equals(type)) {
                stages.add(logicalId);
                Map<String, Object> properties = (Map<String, Object>) definition.get("Properties");
                Object settings = properties.get("DefaultRouteSettings");
                if (!(settings instanceof Map<?, ?> route && route.get("ThrottlingBurstLimit") != null && route.get("ThrottlingRateLimit") != null)) {
                    unthrottled.add(logicalId);
                }
            }
        });
        assertEquals(Set.of("HttpApi", "ManagementIamStage"), stages, "the template's API stages");
        assertEquals(Set.of(), unthrottled, "stages without a burst and a rate limit");
    }

    private static Path templatePath() {
        return Files.isRegularFile(Path.of("template.yaml")) ? Path.of("template.yaml") : Path.of("..", "template.yaml");
    }

    private static Set<String> templateRoutes(Map<String, String> parameters) {
        Template template = Template.read(templatePath(), parameters, reference -> "resolved");
        template.queues().forEach(queue -> template.queueCreated(queue.logicalId(), "http://sqs.local/" + queue.name()));
        Set<String> routes = new TreeSet<>();
        template.functions().stream().filter(f -> f.logicalId().equals("ApiFunction")).findFirst().orElseThrow().events().stream()
                .filter(e -> e instanceof EventSource.HttpRoute)
                .map(e -> (EventSource.HttpRoute) e)
                .forEach(route -> routes.add(route.method() + " " + route.path()));
        return routes;
    }
}
