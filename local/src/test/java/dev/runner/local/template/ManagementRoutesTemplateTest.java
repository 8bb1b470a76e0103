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

/** template.yaml routes to ApiFunction exactly the routes ManagementApi serves, in both modes of ManagementAuth. No I/O but the file. */
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

    private static Set<String> templateRoutes(Map<String, String> parameters) {
        Path path = Files.isRegularFile(Path.of("template.yaml")) ? Path.of("template.yaml") : Path.of("..", "template.yaml");
        Template template = Template.read(path, parameters, reference -> "resolved");
        template.queues().forEach(queue -> template.queueCreated(queue.logicalId(), "http://sqs.local/" + queue.name()));
        Set<String> routes = new TreeSet<>();
        template.functions().stream().filter(f -> f.logicalId().equals("ApiFunction")).findFirst().orElseThrow().events().stream()
                .filter(e -> e instanceof EventSource.HttpRoute)
                .map(e -> (EventSource.HttpRoute) e)
                .forEach(route -> routes.add(route.method() + " " + route.path()));
        return routes;
    }
}
