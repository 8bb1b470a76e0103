package dev.runner.local.template;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runner.app.Grants;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * template.yaml grants each function exactly what its code declares it reaches (the GRANTS of its
 * entry point, which its composition root enforces): the queues it sends to, the queues it sets a
 * message's visibility on, the secrets it reads, and nothing more. The statements checked are the
 * ones the local runtime's IAM enforces; when SAM's translator is installed (python3 with
 * aws-sam-translator), they are shown to be the statements of the roles SAM makes.
 */
class FunctionGrantsTest {

    private static final String ACCOUNT = "000000000000";
    private static final String REGION = "us-east-1";
    /** With a Redis AUTH secret named, so its conditional grants are in the template too. */
    private static final Map<String, String> WITH_REDIS_AUTH = Map.of("RedisAuthSecretName", "runner/redis-auth");
    /** Every SQS action a queue policy could give; which of them a function may have is decided below. */
    private static final List<String> SQS_ACTIONS = List.of("SendMessage", "ReceiveMessage", "DeleteMessage",
            "ChangeMessageVisibility", "GetQueueAttributes", "SetQueueAttributes", "PurgeQueue", "DeleteQueue");
    /** What consuming a queue as an event source needs, besides what the code declares. */
    private static final Set<String> CONSUMER_ACTIONS = Set.of("ReceiveMessage", "DeleteMessage", "GetQueueAttributes",
            "ChangeMessageVisibility");

    @Test
    void everyFunctionIsGrantedExactlyTheQueuesItsCodeSendsTo() {
        List<String> wrong = new ArrayList<>();
        for (FunctionDefinition function : template(WITH_REDIS_AUTH).functions()) {
            Grants grants = grants(function);
            List<PolicyStatement> statements = explicitStatements(function);
            Set<String> consumed = new HashSet<>();
            function.events().forEach(e -> {
                if (e instanceof EventSource.Queue queue) {
                    consumed.add(queue.queueArn());
                }
            });
            for (QueueRole role : QueueRole.values()) {
                String arn = queueArn(function, role);
                for (String action : SQS_ACTIONS) {
                    boolean granted = allows(statements, "sqs:" + action, arn);
                    boolean needed = action.equals("SendMessage") && grants.sends().contains(role)
                            || action.equals("ChangeMessageVisibility") && grants.changesVisibility().contains(role)
                            || action.equals("GetQueueAttributes") && grants.readsAttributes().contains(role);
                    boolean tolerated = needed || consumed.contains(arn) && CONSUMER_ACTIONS.contains(action);
                    if (needed && !granted) {
                        wrong.add(function.logicalId() + " uses " + role + " but its policies lack sqs:" + action);
                    } else if (granted && !tolerated) {
                        wrong.add(function.logicalId() + " is granted sqs:" + action + " on " + role + ", which its code does not use");
                    }
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void everyFunctionMayReadExactlyTheSecretsItsCodeReads() {
        for (Map<String, String> parameters : List.of(WITH_REDIS_AUTH, Map.<String, String>of())) {
            List<String> wrong = new ArrayList<>();
            for (FunctionDefinition function : template(parameters).functions()) {
                Grants grants = grants(function);
                List<PolicyStatement> statements = explicitStatements(function);
                for (SecretRole role : SecretRole.values()) {
                    String name = function.environment().getOrDefault(role.variable(), "");
                    if (name.isEmpty()) {
                        if (grants.reads().contains(role) && role != SecretRole.REDIS_AUTH) {
                            wrong.add(function.logicalId() + " reads " + role + " but its environment names no " + role.variable());
                        }
                        continue;
                    }
                    boolean granted = allows(statements, "secretsmanager:GetSecretValue", secretArn(name));
                    if (grants.reads().contains(role) != granted) {
                        wrong.add(function.logicalId() + (granted ? " may read " : " may not read ") + role + " (" + name + ")"
                                + (granted ? ", which its code does not" : ", which its code does"));
                    }
                }
                if (allows(statements, "secretsmanager:GetSecretValue", secretArn("some/other-secret"))) {
                    wrong.add(function.logicalId() + " may read any secret");
                }
            }
            assertEquals(List.of(), wrong, "with parameters " + parameters);
        }
    }

    @Test
    void noFunctionEnvironmentHoldsASecretValue() {
        // template() fails on any {{resolve:…}}; the variables name secrets, they do not carry them.
        for (FunctionDefinition function : template(WITH_REDIS_AUTH).functions()) {
            assertFalse(function.environment().keySet().stream().anyMatch(name -> name.endsWith("_PASSWORD")
                    || name.equals("RUNNER_API_KEY") || name.equals("RUNNER_HANDLER_SIGNING_SECRET")), function.logicalId());
        }
    }

    @Test
    void theLocalRolesAreTheRolesSamMakes() throws Exception {
        Map<String, Object> translated = samTranslator(WITH_REDIS_AUTH);
        Template template = template(WITH_REDIS_AUTH);
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> roles = (Map<String, Map<String, Object>>) translated.get("roles");
        List<FunctionDefinition> functions = template.functions();
        assertEquals(new TreeMap<>(roles).keySet(), new TreeMap<>(byId(functions)).keySet());
        for (FunctionDefinition function : functions) {
            Map<String, Object> role = roles.get(function.logicalId());
            List<PolicyStatement> sam = new ArrayList<>();
            Object policies = template.intrinsics().resolve(role.get("Policies"), function.logicalId() + ".Policies");
            for (Object policy : (List<?>) policies) {
                Map<?, ?> document = (Map<?, ?>) ((Map<?, ?>) policy).get("PolicyDocument");
                for (Object statement : (List<?>) document.get("Statement")) {
                    Map<?, ?> s = (Map<?, ?>) statement;
                    sam.add(new PolicyStatement(!"Deny".equals(s.get("Effect")), strings(s.get("Action")), strings(s.get("Resource"))));
                }
            }
            if (((List<?>) role.get("ManagedPolicyArns")).stream().anyMatch(arn -> String.valueOf(arn).endsWith("/AWSLambdaSQSQueueExecutionRole"))) {
                sam.add(SamPolicies.SQS_EVENT_SOURCE);
            }
            assertEquals(Set.copyOf(sam), Set.copyOf(function.policies().orElseThrow()), function.logicalId());
        }
    }

    @Test
    void theLocalPolicyTemplatesAreSams() throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> sams = (Map<String, Object>) samTranslator(Map.of()).get("templates");
        SamPolicies.templates().forEach((name, definition) -> assertEquals(sams.get(name), definition, name));
    }

    // ---- helpers

    static Template template(Map<String, String> parameters) {
        String text;
        try {
            text = Files.readString(projectTemplate());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        Template template = Template.parse(text, parameters, reference -> {
            throw new AssertionError("a secret is resolved into the template: {{resolve:" + reference + "}}");
        });
        template.queues().forEach(q -> template.queueCreated(q.logicalId(),
                "https://sqs." + REGION + ".amazonaws.com/" + ACCOUNT + "/" + q.name()));
        return template;
    }

    private static Grants grants(FunctionDefinition function) {
        try {
            return (Grants) Class.forName(function.handlerClass()).getField("GRANTS").get(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(function.handlerClass() + " declares no public static GRANTS", e);
        }
    }

    /** The function's own Policies: without what SAM adds for its event sources on every queue. */
    private static List<PolicyStatement> explicitStatements(FunctionDefinition function) {
        return function.policies().orElseThrow().stream().filter(s -> !s.equals(SamPolicies.SQS_EVENT_SOURCE)).toList();
    }

    private static boolean allows(List<PolicyStatement> statements, String action, String resource) {
        return statements.stream().anyMatch(s -> s.allow() && s.matches(action, resource))
                && statements.stream().noneMatch(s -> !s.allow() && s.matches(action, resource));
    }

    private static String queueArn(FunctionDefinition function, QueueRole role) {
        String url = function.environment().get(role.variable());
        assertTrue(url != null && !url.isEmpty(), function.logicalId() + " has no " + role.variable());
        return "arn:aws:sqs:" + REGION + ":" + ACCOUNT + ":" + url.substring(url.lastIndexOf('/') + 1);
    }

    /** As Secrets Manager names a secret: its name and six random characters. */
    private static String secretArn(String name) {
        return "arn:aws:secretsmanager:" + REGION + ":" + ACCOUNT + ":secret:" + name + "-Ab3dE6";
    }

    private static List<String> strings(Object value) {
        return value instanceof List<?> list ? list.stream().map(String::valueOf).toList() : List.of(String.valueOf(value));
    }

    private static Map<String, FunctionDefinition> byId(List<FunctionDefinition> functions) {
        Map<String, FunctionDefinition> byId = new LinkedHashMap<>();
        functions.forEach(f -> byId.put(f.logicalId(), f));
        return byId;
    }

    /** Runs sam_roles.py; skips the test when python3 or the translator is not installed. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> samTranslator(Map<String, String> parameters) throws Exception {
        Path script = Files.createTempFile("sam_roles", ".py");
        try (InputStream in = FunctionGrantsTest.class.getResourceAsStream("/sam_roles.py")) {
            Files.write(script, in.readAllBytes());
        }
        List<String> command = new ArrayList<>(List.of("python3", script.toString(), projectTemplate().toString()));
        parameters.forEach((name, value) -> command.add(name + "=" + value));
        Process process;
        try {
            process = new ProcessBuilder(command).start();
        } catch (IOException e) {
            Assumptions.abort("python3 is not installed: " + e.getMessage());
            throw e;
        }
        try {
            byte[] out = process.getInputStream().readAllBytes();
            String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "sam_roles.py did not finish");
            Assumptions.assumeFalse(process.exitValue() == 3, "SAM's translator is not installed: " + err.strip());
            assertEquals(0, process.exitValue(), err);
            return new ObjectMapper().readValue(out, Map.class);
        } finally {
            Files.deleteIfExists(script);
        }
    }

    static Path projectTemplate() {
        for (Path candidate : new Path[] {Path.of("template.yaml"), Path.of("..", "template.yaml")}) {
            if (Files.isRegularFile(candidate)) {
                return candidate.toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("template.yaml not found from " + Path.of("").toAbsolutePath());
    }
}
