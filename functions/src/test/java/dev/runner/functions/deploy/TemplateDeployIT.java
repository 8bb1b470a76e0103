package dev.runner.functions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What a deploy of template.yaml does to the "live" aliases every event source invokes, read from
 * the SAM translator's own output (src/test/python/sam_deploy_check.py runs it once per parameter).
 * A version's identity is its logical id plus its create-only properties: when it changes,
 * CloudFormation publishes a new version and moves the alias.
 */
class TemplateDeployIT {

    private static final String BASE_PARAMETERS = """
            {"SubnetIds": ["subnet-0a1b2c3d", "subnet-4e5f6a7b"], "SecurityGroupIds": ["sg-0c1d2e3f"],
             "DatabaseHost": "runner-proxy.proxy-abc.us-east-1.rds.amazonaws.com",
             "RedisUrl": "rediss://runner-cache.serverless.use1.cache.amazonaws.com:6379"}""";
    private static final int FUNCTIONS = 8;

    private static JsonNode report;
    private static String skipped;

    /** The translator's report, made once for all tests; each test is skipped where it cannot be made. */
    private static synchronized JsonNode report() {
        if (report == null && skipped == null) {
            skipped = ExternalTool.missing("python3 with aws-sam-translator (pip install aws-sam-translator)",
                    "python3", "-c", "import samtranslator").orElse(null);
            if (skipped == null) {
                try {
                    report = translate();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        if (skipped != null) {
            ExternalTool.skip(skipped);
        }
        return report;
    }

    private static JsonNode translate() throws IOException {
        Path output = Files.createTempFile("sam-deploy-check", ".json");
        try {
            var result = ExternalTool.run(List.of("python3", "functions/src/test/python/sam_deploy_check.py",
                    "template.yaml", BASE_PARAMETERS, output.toString(), "infra.yaml"), Duration.ofMinutes(3));
            assertEquals(0, result.exitCode(), "the SAM translator failed on template.yaml:\n" + result.output());
            return Json.parse(Files.readAllBytes(output));
        } finally {
            Files.deleteIfExists(output);
        }
    }

    @Test
    void everyFunctionHasALiveAlias() {
        assertEquals(FUNCTIONS, report().path("baseline").size(), report().path("baseline").toString());
    }

    @Test
    void everyParameterTheFunctionsReadMovesEveryLiveAliasToANewVersion() {
        JsonNode baseline = report().path("baseline");
        List<String> stale = new ArrayList<>();
        Set<String> functionParameters = functionParameters();
        assertTrue(functionParameters.containsAll(Set.of("RedisUrl", "MaxAttempts", "DatabaseSecretName", "SubnetIds")),
                "the functions read these parameters: " + functionParameters);
        for (String parameter : functionParameters) {
            JsonNode variant = report().path("variants").path(parameter);
            baseline.fieldNames().forEachRemaining(alias -> {
                if (variant.path(alias).asText().equals(baseline.path(alias).asText())) {
                    stale.add(alias + " stays on its version when " + parameter + " changes");
                }
            });
        }
        assertTrue(stale.isEmpty(), String.join("\n", stale));
    }

    @Test
    void identicalParametersKeepEveryLiveAliasOnItsVersion() {
        assertEquals(report().path("baseline"), report().path("baselineAgain"));
    }

    @Test
    void parametersTheFunctionsDoNotReadPublishNoNewVersion() {
        Set<String> others = new HashSet<>();
        report().path("variants").fieldNames().forEachRemaining(others::add);
        others.removeAll(functionParameters());
        assertTrue(others.containsAll(Set.of("ItemsWebhookMaxConcurrency", "LogRetentionDays", "AlarmTopicArn")), others.toString());
        for (String parameter : others) {
            assertEquals(report().path("baseline"), report().path("variants").path(parameter),
                    parameter + " reaches no function, yet changing it would publish new versions (new SnapStart snapshots)");
        }
    }

    @Test
    void newCodeMovesEveryLiveAlias() {
        JsonNode baseline = report().path("baseline");
        baseline.fieldNames().forEachRemaining(alias ->
                assertFalse(report().path("otherCode").path(alias).asText().equals(baseline.path(alias).asText()),
                        alias + " stays on its version when the code changes"));
    }

    @Test
    void samBuildBuildsEveryFunctionAndPointsItsOwnCodeUriAtTheBuild() {
        // The SAM CLI itself is not installed here: its rules are (sam_build_problems), and
        // DeploymentPackageIT runs the make targets it would run.
        assertEquals(List.of(), strings(report().path("samBuildProblems")));
    }

    @Test
    void guidedDeployAsksNoAuthenticationQuestion() {
        // SAM CLI's guided deploy aborts on the default answer of "has no authentication. Is this
        // okay?", which it asks for every HTTP route whose event and API both lack Auth.
        assertEquals(0, report().path("guidedAuthPrompts").size(),
                "sam deploy --guided would ask about: " + report().path("guidedAuthPrompts"));
    }

    @Test
    void dashboardBodyIsJson() {
        if (report().path("dashboardErrors").size() > 0) {
            fail(report().path("dashboardErrors").toString());
        }
    }

    @Test
    void infraOutputsGiveEveryParameterTemplateYamlNeeds() {
        JsonNode overrides = report().path("infraOverrides");
        assertEquals(0, overrides.path("missing").size(), "infra.yaml ParameterOverrides lacks " + overrides.path("missing"));
        assertEquals(0, overrides.path("unknown").size(), "template.yaml has no parameters " + overrides.path("unknown"));
        // A default that is wrong for what infra.yaml creates must be given too: ElastiCache Serverless is cluster mode.
        assertEquals("cluster", overrides.path("given").path("RedisMode").asText(), "infra.yaml's Valkey needs RedisMode=cluster");
    }

    private static Set<String> functionParameters() {
        return new HashSet<>(strings(report().path("functionParameters")));
    }

    private static List<String> strings(JsonNode array) {
        List<String> values = new ArrayList<>();
        array.forEach(value -> values.add(value.asText()));
        return values;
    }
}
