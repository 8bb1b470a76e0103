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
 * message's visibility on, the secrets it reads, receive and delete on the queues its event sources
 * read, and nothing more. The statements checked are the ones the local runtime's IAM enforces;
 * when SAM's translator is installed (python3 with aws-sam-translator), they are shown to be the
 * statements of the roles CloudFormation receives, and those roles to grant nothing on every resource
 * but what AWS authorizes no other way.
 */
class FunctionGrantsTest {

    private static final String ACCOUNT = "000000000000";
    private static final String REGION = "us-east-1";
    /** With a Redis AUTH secret named, so its conditional grants are in the template too. */
    private static final Map<String, String> WITH_REDIS_AUTH = Map.of("RedisAuthSecretName", "runner/redis-auth");
    /** Every SQS action a queue policy could give; which of them a function may have is decided below. */
    private static final List<String> SQS_ACTIONS = List.of("SendMessage", "ReceiveMessage", "DeleteMessage",
            "ChangeMessageVisibility", "GetQueueAttributes", "SetQueueAttributes", "PurgeQueue", "DeleteQueue");
    /** What Lambda's poller needs of the function's role on a queue it reads (the SQS event source). */
    private static final Set<String> CONSUMER_ACTIONS = Set.of("ReceiveMessage", "DeleteMessage", "GetQueueAttributes");
    /**
     * The only actions a role may be granted on {@code Resource: "*"}, each because AWS authorizes it on no narrower
     * resource: EC2's Describe actions support no resource-level permissions (the Service Authorization Reference
     * lists no resource type for them; Lambda's developer guide says DescribeNetworkInterfaces works only on "*"),
     * and Lambda needs both to attach a function to its VPC (template.yaml, FunctionNetworkInterfaces).
     */
    private static final Set<String> ONLY_ON_EVERY_RESOURCE = Set.of("ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets");

    @Test
    void everyFunctionIsGrantedExactlyTheQueuesItsCodeSendsTo() {
        Template template = template(WITH_REDIS_AUTH);
        List<String> wrong = new ArrayList<>();
        for (FunctionDefinition function : template.functions()) {
            wrong.addAll(queueGrantProblems(template, function, function.policies().orElseThrow()));
        }
        assertEquals(List.of(), wrong);
    }

    /** The same, on the roles CloudFormation receives: what SAM's translator makes of the template. */
    @Test
    void theTranslatedRolesReceiveDeleteAndSendOnlyOnTheQueuesTheirFunctionsUse() throws Exception {
        Template template = template(WITH_REDIS_AUTH);
        Map<String, List<PolicyStatement>> translated = translatedRoles(template, WITH_REDIS_AUTH);
        List<String> wrong = new ArrayList<>();
        for (FunctionDefinition function : template.functions()) {
            wrong.addAll(queueGrantProblems(template, function, translated.get(function.logicalId())));
        }
        assertEquals(List.of(), wrong);
    }

    /**
     * No role of a function grants anything on every resource ({@code "*"}, or an ARN whose resource is "*") but the
     * Describe actions AWS authorizes on nothing narrower; nor holds a managed policy of AWS's, whose statements this
     * test cannot hold to that (AWSLambdaVPCAccessExecutionRole writes logs into any log group): only the template's own.
     */
    @Test
    void noTranslatedRoleGrantsAnythingOnEveryResourceButWhatAwsAuthorizesNoOtherWay() throws Exception {
        Map<String, Object> translated = samTranslator(WITH_REDIS_AUTH);
        Template template = template(WITH_REDIS_AUTH);
        List<String> wrong = new ArrayList<>();
        roles(translated).forEach((function, role) -> {
            List<PolicyStatement> statements = new ArrayList<>(statements(template, function, role));
            for (String arn : managedPolicies(template, function, role)) {
                List<PolicyStatement> own = ownManagedPolicy(translated, template, arn);
                if (own == null) {
                    wrong.add(function + " holds managed policy " + arn + ", not one of the template's own");
                } else {
                    statements.addAll(own);
                }
            }
            for (PolicyStatement statement : statements) {
                if (statement.allow() && statement.resources().stream().anyMatch(FunctionGrantsTest::everything)
                        && !ONLY_ON_EVERY_RESOURCE.containsAll(statement.actions())) {
                    wrong.add(function + " may " + statement.actions() + " on " + statement.resources());
                }
            }
        });
        assertEquals(List.of(), wrong);
    }

    @Test
    void everyFunctionMayReadExactlyTheSecretsItsCodeReads() {
        for (Map<String, String> parameters : List.of(WITH_REDIS_AUTH, Map.<String, String>of())) {
            List<String> wrong = new ArrayList<>();
            for (FunctionDefinition function : template(parameters).functions()) {
                Grants grants = grants(function);
                List<PolicyStatement> statements = function.policies().orElseThrow();
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
        Template template = template(WITH_REDIS_AUTH);
        Map<String, List<PolicyStatement>> translated = translatedRoles(template, WITH_REDIS_AUTH);
        List<FunctionDefinition> functions = template.functions();
        assertEquals(new TreeMap<>(translated).keySet(), new TreeMap<>(byId(functions)).keySet());
        for (FunctionDefinition function : functions) {
            assertEquals(Set.copyOf(translated.get(function.logicalId())), Set.copyOf(function.policies().orElseThrow()),
                    function.logicalId());
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

    /**
     * Where a function's statements grant a queue action its code and event sources do not use, or
     * lack one they do: receive, delete and attributes on the queues its event sources read (what
     * Lambda's poller needs), sends, visibility changes and attribute reads where its grants say.
     */
    private static List<String> queueGrantProblems(Template template, FunctionDefinition function, List<PolicyStatement> statements) {
        Grants grants = grants(function);
        Map<String, QueueRole> roles = new LinkedHashMap<>();
        for (QueueRole role : QueueRole.values()) {
            roles.put(queueArn(function, role), role);
        }
        Set<String> consumed = new HashSet<>();
        function.events().forEach(e -> {
            if (e instanceof EventSource.Queue queue) {
                consumed.add(queue.queueArn());
            }
        });
        List<String> wrong = new ArrayList<>();
        for (QueueDefinition queue : template.queues()) {
            QueueRole role = roles.get(queue.arn());
            for (String action : SQS_ACTIONS) {
                boolean granted = allows(statements, "sqs:" + action, queue.arn());
                boolean needed = consumed.contains(queue.arn()) && CONSUMER_ACTIONS.contains(action)
                        || role != null && (action.equals("SendMessage") && grants.sends().contains(role)
                        || action.equals("ChangeMessageVisibility") && grants.changesVisibility().contains(role)
                        || action.equals("GetQueueAttributes") && grants.readsAttributes().contains(role));
                if (needed && !granted) {
                    wrong.add(function.logicalId() + " uses " + queue.logicalId() + " but may not sqs:" + action + " on it");
                } else if (granted && !needed) {
                    wrong.add(function.logicalId() + " may sqs:" + action + " on " + queue.logicalId() + ", which it does not use");
                }
            }
        }
        return wrong;
    }

    /** "*", or an ARN whose resource part is "*": every queue, secret or database. */
    private static boolean everything(String resource) {
        return resource.equals("*") || resource.startsWith("arn:") && resource.endsWith(":*");
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
        if (value == null) {
            return List.of();
        }
        return value instanceof List<?> list ? list.stream().map(String::valueOf).toList() : List.of(String.valueOf(value));
    }

    /** Each function's role as SAM's translator makes it, as statements with intrinsics resolved. */
    private static Map<String, List<PolicyStatement>> translatedRoles(Template template, Map<String, String> parameters) throws Exception {
        Map<String, List<PolicyStatement>> statements = new LinkedHashMap<>();
        Map<String, Object> translated = samTranslator(parameters);
        roles(translated).forEach((function, role) -> {
            List<PolicyStatement> all = new ArrayList<>(statements(template, function, role));
            for (String arn : managedPolicies(template, function, role)) {
                if (arn.endsWith("/AWSLambdaSQSQueueExecutionRole")) {
                    all.add(SamPolicies.SQS_EVENT_SOURCE);
                }
                List<PolicyStatement> own = ownManagedPolicy(translated, template, arn);
                if (own != null) {
                    all.addAll(own);
                }
            }
            statements.put(function, all);
        });
        return statements;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> roles(Map<String, Object> translated) {
        return (Map<String, Map<String, Object>>) translated.get("roles");
    }

    private static List<String> managedPolicies(Template template, String function, Map<String, Object> role) {
        return strings(template.intrinsics().resolve(role.get("ManagedPolicyArns"), function + ".ManagedPolicyArns"));
    }

    /** The statements of the template's own managed policy that {@code arn} (a resolved Ref) names; null for any other. */
    @SuppressWarnings("unchecked")
    private static List<PolicyStatement> ownManagedPolicy(Map<String, Object> translated, Template template, String arn) {
        Object document = ((Map<String, Object>) translated.get("managedPolicies")).get(arn);
        if (document == null) {
            return null;
        }
        return document((Map<?, ?>) template.intrinsics().resolve(document, arn + ".PolicyDocument"));
    }

    /** The statements of a translated role's inline policies. */
    private static List<PolicyStatement> statements(Template template, String function, Map<String, Object> role) {
        List<PolicyStatement> statements = new ArrayList<>();
        Object policies = template.intrinsics().resolve(role.get("Policies"), function + ".Policies");
        for (Object policy : (List<?>) policies) {
            statements.addAll(document((Map<?, ?>) ((Map<?, ?>) policy).get("PolicyDocument")));
        }
        return statements;
    }

    private static List<PolicyStatement> document(Map<?, ?> document) {
        List<PolicyStatement> statements = new ArrayList<>();
        for (Object statement : (List<?>) document.get("Statement")) {
            Map<?, ?> s = (Map<?, ?>) statement;
            statements.add(new PolicyStatement(!"Deny".equals(s.get("Effect")), strings(s.get("Action")), strings(s.get("Resource"))));
        }
        return statements;
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
