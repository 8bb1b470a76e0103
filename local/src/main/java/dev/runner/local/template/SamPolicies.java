package dev.runner.local.template;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A function's {@code Policies} as SAM turns them into its role's statements: SAM policy templates
 * expanded from their definitions (sam-policy-templates.json, a copy of the translator's), inline
 * policy documents taken as they are; or the inline policies of an AWS::IAM::Role the function
 * names. Managed policies by name or ARN are not evaluated locally: they grant nothing here, with
 * a warning, so a function relying on one is refused loudly rather than allowed silently; only
 * AWSLambdaSQSQueueExecutionRole is known, and the two that grant nothing the local runtime checks.
 */
final class SamPolicies {

    /** What SAM attaches to a function with an SQS event source (AWSLambdaSQSQueueExecutionRole). */
    static final PolicyStatement SQS_EVENT_SOURCE = new PolicyStatement(true,
            List.of("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"), List.of("*"));

    /** Managed policies of logs and EC2 only: nothing of SQS or Secrets Manager, so nothing to evaluate here. */
    private static final List<String> NOTHING_CHECKED_LOCALLY = List.of(
            "/service-role/AWSLambdaBasicExecutionRole", "/service-role/AWSLambdaVPCAccessExecutionRole");

    private static final Map<String, Object> TEMPLATES = load();

    private SamPolicies() {}

    /** The statements of {@code policies} (the property as written, intrinsics unresolved). */
    static List<PolicyStatement> statements(String where, Object policies, Intrinsics intrinsics, Consumer<String> warn) {
        if (policies == null) {
            return List.of();
        }
        Object resolved = intrinsics.resolve(policies, where);
        List<?> entries = resolved instanceof List<?> list ? list : List.of(resolved);
        List<PolicyStatement> statements = new ArrayList<>();
        for (Object entry : entries) {
            if (entry instanceof String managed) {
                warn.accept(where + ": managed policy " + managed + " is not evaluated locally; it grants nothing here");
            } else if (entry instanceof Map<?, ?> map && map.containsKey("Statement")) {
                statements.addAll(document(where, map, warn));
            } else if (entry instanceof Map<?, ?> map && map.size() == 1) {
                String name = String.valueOf(map.keySet().iterator().next());
                Object template = TEMPLATES.get(name);
                if (template == null) {
                    warn.accept(where + ": policy template " + name + " is not known locally; it grants nothing here");
                    continue;
                }
                Map<?, ?> parameters = map.get(name) instanceof Map<?, ?> given ? given : Map.of();
                Object definition = substitute(((Map<?, ?>) template).get("Definition"), parameters, where + "." + name);
                statements.addAll(document(where, (Map<?, ?>) intrinsics.resolve(definition, where + "." + name), warn));
            } else {
                warn.accept(where + ": policy " + entry + " is not understood locally; it grants nothing here");
            }
        }
        return statements;
    }

    /**
     * The statements of an AWS::IAM::Role's {@code Policies} and {@code ManagedPolicyArns}; a managed policy of the
     * template itself ({@code templatePolicy} finds its document by what its Ref resolves to) is read as written.
     */
    static List<PolicyStatement> roleStatements(String roleId, Map<String, Object> role, Intrinsics intrinsics,
                                                Function<String, Optional<Map<?, ?>>> templatePolicy, Consumer<String> warn) {
        List<PolicyStatement> statements = new ArrayList<>();
        if (intrinsics.resolve(role.get("Policies"), roleId + ".Policies") instanceof List<?> policies) {
            for (Object policy : policies) {
                if (!(policy instanceof Map<?, ?> named) || !(named.get("PolicyDocument") instanceof Map<?, ?> document)) {
                    throw new TemplateException(roleId + ".Policies: a policy without a PolicyDocument: " + policy);
                }
                statements.addAll(document(roleId + ".Policies", document, warn));
            }
        }
        if (intrinsics.resolve(role.get("ManagedPolicyArns"), roleId + ".ManagedPolicyArns") instanceof List<?> arns) {
            for (Object arn : arns) {
                String name = String.valueOf(arn);
                Optional<Map<?, ?>> own = templatePolicy.apply(name);
                if (own.isPresent()) {
                    statements.addAll(document(roleId + ".ManagedPolicyArns", own.get(), warn));
                } else if (name.endsWith("/service-role/AWSLambdaSQSQueueExecutionRole")) {
                    statements.add(SQS_EVENT_SOURCE);
                } else if (NOTHING_CHECKED_LOCALLY.stream().noneMatch(name::endsWith)) {
                    warn.accept(roleId + ": managed policy " + name + " is not evaluated locally; it grants nothing here");
                }
            }
        }
        return statements;
    }

    private static List<PolicyStatement> document(String where, Map<?, ?> document, Consumer<String> warn) {
        Object raw = document.get("Statement");
        List<?> list = raw instanceof List<?> l ? l : List.of(raw);
        List<PolicyStatement> statements = new ArrayList<>();
        for (Object element : list) {
            if (!(element instanceof Map<?, ?> statement)) {
                throw new TemplateException(where + ": a policy statement is not a mapping: " + element);
            }
            if (statement.containsKey("NotAction") || statement.containsKey("NotResource") || statement.containsKey("Condition")) {
                warn.accept(where + ": statements with NotAction, NotResource or Condition are not evaluated locally");
                continue;
            }
            statements.add(new PolicyStatement(!"Deny".equals(statement.get("Effect")),
                    strings(statement.get("Action")), strings(statement.get("Resource"))));
        }
        return statements;
    }

    private static List<String> strings(Object value) {
        if (value == null) {
            return List.of();
        }
        if (value instanceof List<?> list) {
            return list.stream().map(String::valueOf).toList();
        }
        return List.of(String.valueOf(value));
    }

    /** The definition with each {@code {"Ref": parameter}} of the template replaced by the value given. */
    private static Object substitute(Object node, Map<?, ?> parameters, String where) {
        if (node instanceof Map<?, ?> map) {
            if (map.size() == 1 && map.get("Ref") instanceof String name && !name.startsWith("AWS::")) {
                if (!parameters.containsKey(name)) {
                    throw new TemplateException(where + " needs its parameter " + name);
                }
                return parameters.get(name);
            }
            Map<String, Object> copy = new LinkedHashMap<>();
            map.forEach((key, value) -> copy.put(String.valueOf(key), substitute(value, parameters, where)));
            return copy;
        }
        if (node instanceof List<?> list) {
            return list.stream().map(element -> substitute(element, parameters, where)).toList();
        }
        return node;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> load() {
        try (InputStream in = SamPolicies.class.getResourceAsStream("sam-policy-templates.json")) {
            if (in == null) {
                throw new IllegalStateException("sam-policy-templates.json is missing from the classpath");
            }
            return (Map<String, Object>) new ObjectMapper().readValue(in, Map.class).get("Templates");
        } catch (IOException e) {
            throw new IllegalStateException("sam-policy-templates.json is unreadable", e);
        }
    }

    /** The templates as evaluated here, for the test that compares them with SAM's. */
    static Map<String, Object> templates() {
        return TEMPLATES;
    }
}
