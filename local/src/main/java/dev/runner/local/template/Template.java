package dev.runner.local.template;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * A SAM template read for the local runtime: which queues to create, which functions to run and
 * what invokes them. Nothing here knows a Runner function by name, so a function or queue the
 * template gains later is wired without code changes. Resources whose {@code Condition} is false
 * are left out, as CloudFormation would.
 */
public final class Template implements Intrinsics.Resources {

    /** Lambda's pollers per SQS mapping when no ScalingConfig caps them; kept small for one machine. */
    public static final int DEFAULT_MAXIMUM_CONCURRENCY = 5;

    private static final String SERVERLESS_FUNCTION = "AWS::Serverless::Function";
    private static final String LAMBDA_FUNCTION = "AWS::Lambda::Function";
    private static final String QUEUE = "AWS::SQS::Queue";
    private static final List<String> QUEUE_ATTRIBUTES = List.of(
            "DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds",
            "VisibilityTimeout", "FifoQueue", "ContentBasedDeduplication");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Intrinsics intrinsics;
    private final Map<String, Map<String, Object>> resources;
    private final Map<String, Object> functionGlobals;
    private final Map<String, String> queueUrls = new ConcurrentHashMap<>();
    private final List<String> warnings = new ArrayList<>();

    private Template(Map<String, Object> root, Map<String, String> parameterOverrides, Intrinsics.Stack stack,
                     UnaryOperator<String> dynamicReferences) {
        this.intrinsics = new Intrinsics(stack, parameters(section(root, "Parameters"), parameterOverrides),
                section(root, "Conditions"), dynamicReferences);
        this.functionGlobals = section(section(root, "Globals"), "Function");
        this.resources = new LinkedHashMap<>();
        section(root, "Resources").forEach((logicalId, resource) -> {
            if (!(resource instanceof Map<?, ?> map)) {
                throw new TemplateException("resource " + logicalId + " is not a mapping");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> typed = (Map<String, Object>) map;
            if (typed.get("Condition") instanceof String condition && !intrinsics.condition(condition, logicalId + ".Condition")) {
                return;
            }
            resources.put(logicalId, typed);
        });
        intrinsics.resources(this);
    }

    public static Template read(Path path, Map<String, String> parameterOverrides, UnaryOperator<String> dynamicReferences) {
        if (!Files.isRegularFile(path)) {
            throw new TemplateException("no template at " + path.toAbsolutePath()
                    + "; run from the project directory or pass the template's path as the first argument");
        }
        String text;
        try {
            text = Files.readString(path);
        } catch (IOException e) {
            throw new TemplateException("cannot read template " + path + ": " + e.getMessage());
        }
        return parse(text, parameterOverrides, dynamicReferences);
    }

    public static Template parse(String text, Map<String, String> parameterOverrides, UnaryOperator<String> dynamicReferences) {
        return new Template(CloudFormationYaml.parse(text), parameterOverrides, Intrinsics.Stack.local(), dynamicReferences);
    }

    public Intrinsics intrinsics() {
        return intrinsics;
    }

    /** What the template declares that the local runtime leaves out (REST APIs, filters…). */
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    /** The queues in creation order: every dead-letter queue before the queues that redrive to it. */
    public List<QueueDefinition> queues() {
        Map<String, QueueDefinition> byName = new LinkedHashMap<>();
        resources.forEach((logicalId, resource) -> {
            if (QUEUE.equals(resource.get("Type"))) {
                QueueDefinition queue = queue(logicalId, properties(resource));
                byName.put(queue.name(), queue);
            }
        });
        List<QueueDefinition> ordered = new ArrayList<>();
        byName.values().forEach(queue -> addAfterDeadLetterQueue(queue, byName, ordered, new ArrayList<>()));
        return ordered;
    }

    /** Records where a queue was created, so that {@code Ref} to it yields its URL. */
    public void queueCreated(String logicalId, String url) {
        queueUrls.put(logicalId, url);
    }

    /** Every function with its resolved environment and event sources; call once the queues exist. */
    public List<FunctionDefinition> functions() {
        Map<String, List<EventSource>> events = new LinkedHashMap<>();
        Map<String, Map<String, Object>> functionProperties = new LinkedHashMap<>();
        resources.forEach((logicalId, resource) -> {
            Object type = resource.get("Type");
            if (SERVERLESS_FUNCTION.equals(type)) {
                Map<String, Object> merged = Globals.merge(functionGlobals, properties(resource));
                functionProperties.put(logicalId, merged);
                events.put(logicalId, new ArrayList<>(samEvents(logicalId, section(merged, "Events"))));
            } else if (LAMBDA_FUNCTION.equals(type)) {
                functionProperties.put(logicalId, properties(resource));
                events.put(logicalId, new ArrayList<>());
            }
        });
        resources.forEach((logicalId, resource) -> {
            Object type = resource.get("Type");
            if ("AWS::Lambda::EventSourceMapping".equals(type)) {
                mapping(logicalId, properties(resource), functionProperties.keySet())
                        .ifPresent(m -> events.get(m.function()).add(m.source()));
            } else if ("AWS::Events::Rule".equals(type) || "AWS::Scheduler::Schedule".equals(type)) {
                rule(logicalId, properties(resource), functionProperties.keySet())
                        .forEach(m -> events.get(m.function()).add(m.source()));
            } else if (type instanceof String t && t.startsWith("AWS::Serverless::") && !t.equals(SERVERLESS_FUNCTION)
                    && !t.equals("AWS::Serverless::HttpApi")) {
                warn(logicalId + ": " + t + " is not run locally");
            }
        });
        List<FunctionDefinition> functions = new ArrayList<>();
        functionProperties.forEach((logicalId, properties) -> functions.add(function(logicalId, properties, events.get(logicalId))));
        return functions;
    }

    // ---- Intrinsics.Resources

    @Override
    public boolean contains(String logicalId) {
        return resources.containsKey(logicalId);
    }

    @Override
    public Object ref(String logicalId) {
        Object type = resources.get(logicalId).get("Type");
        if (QUEUE.equals(type)) {
            String url = queueUrls.get(logicalId);
            if (url == null) {
                throw new TemplateException("Ref " + logicalId + ": the queue's URL is only known once it is created");
            }
            return url;
        }
        if (SERVERLESS_FUNCTION.equals(type) || LAMBDA_FUNCTION.equals(type)) {
            return functionName(logicalId);
        }
        return logicalId;
    }

    @Override
    public Object getAtt(String logicalId, String attribute) {
        Object type = resources.get(logicalId).get("Type");
        if (QUEUE.equals(type)) {
            String name = queueName(logicalId, properties(resources.get(logicalId)));
            return switch (attribute) {
                case "Arn" -> queueArn(name);
                case "QueueName" -> name;
                case "QueueUrl" -> ref(logicalId);
                default -> throw new TemplateException("Fn::GetAtt " + logicalId + "." + attribute + ": a queue has Arn, QueueName, QueueUrl");
            };
        }
        if ((SERVERLESS_FUNCTION.equals(type) || LAMBDA_FUNCTION.equals(type)) && attribute.equals("Arn")) {
            return functionArn(functionName(logicalId));
        }
        // Other resources are not run locally; a stable placeholder keeps references to them resolvable.
        return "arn:aws:local:" + intrinsics.stack().region() + ":" + intrinsics.stack().accountId() + ":" + logicalId + "/" + attribute;
    }

    // ---- queues

    private QueueDefinition queue(String logicalId, Map<String, Object> properties) {
        String name = queueName(logicalId, properties);
        Map<String, String> attributes = new LinkedHashMap<>();
        for (String attribute : QUEUE_ATTRIBUTES) {
            if (properties.containsKey(attribute)) {
                String value = intrinsics.string(properties.get(attribute), logicalId + "." + attribute);
                if (value != null) {
                    attributes.put(attribute, value);
                }
            }
        }
        Optional<String> deadLetterQueue = Optional.empty();
        if (properties.containsKey("RedrivePolicy")) {
            Object policy = intrinsics.resolve(properties.get("RedrivePolicy"), logicalId + ".RedrivePolicy");
            Map<String, Object> redrive = redrivePolicy(logicalId, policy);
            Object target = redrive.get("deadLetterTargetArn");
            if (!(target instanceof String arn) || redrive.get("maxReceiveCount") == null) {
                throw new TemplateException(logicalId + ".RedrivePolicy needs deadLetterTargetArn and maxReceiveCount: " + redrive);
            }
            deadLetterQueue = Optional.of(arn.substring(arn.lastIndexOf(':') + 1));
            Map<String, Object> normalised = new LinkedHashMap<>();
            normalised.put("deadLetterTargetArn", arn);
            normalised.put("maxReceiveCount", String.valueOf(redrive.get("maxReceiveCount")));
            attributes.put("RedrivePolicy", toJson(normalised));
        }
        return new QueueDefinition(logicalId, name, queueArn(name), attributes, deadLetterQueue);
    }

    private Map<String, Object> redrivePolicy(String logicalId, Object policy) {
        Object parsed = policy;
        if (policy instanceof String json) {
            try {
                parsed = JSON.readValue(json, Map.class);
            } catch (JsonProcessingException e) {
                throw new TemplateException(logicalId + ".RedrivePolicy is not JSON: " + e.getOriginalMessage());
            }
        }
        if (!(parsed instanceof Map<?, ?> map)) {
            throw new TemplateException(logicalId + ".RedrivePolicy is not a mapping: " + policy);
        }
        Map<String, Object> typed = new LinkedHashMap<>();
        map.forEach((k, v) -> typed.put(String.valueOf(k), v));
        return typed;
    }

    private static void addAfterDeadLetterQueue(QueueDefinition queue, Map<String, QueueDefinition> byName,
                                                List<QueueDefinition> ordered, List<String> visiting) {
        if (ordered.contains(queue)) {
            return;
        }
        if (visiting.contains(queue.name())) {
            throw new TemplateException("queues redrive to each other in a cycle: " + visiting);
        }
        visiting.add(queue.name());
        queue.deadLetterQueueName().map(byName::get)
                .ifPresent(dlq -> addAfterDeadLetterQueue(dlq, byName, ordered, visiting));
        ordered.add(queue);
    }

    private String queueName(String logicalId, Map<String, Object> properties) {
        String declared = properties.containsKey("QueueName")
                ? intrinsics.string(properties.get("QueueName"), logicalId + ".QueueName") : null;
        if (declared != null) {
            return declared;
        }
        boolean fifo = "true".equalsIgnoreCase(
                String.valueOf(intrinsics.resolve(properties.get("FifoQueue"), logicalId + ".FifoQueue")));
        return intrinsics.stack().name() + "-" + logicalId + (fifo ? ".fifo" : "");
    }

    private String queueArn(String name) {
        return "arn:aws:sqs:" + intrinsics.stack().region() + ":" + intrinsics.stack().accountId() + ":" + name;
    }

    // ---- functions

    private FunctionDefinition function(String logicalId, Map<String, Object> properties, List<EventSource> events) {
        String handler = intrinsics.string(properties.get("Handler"), logicalId + ".Handler");
        if (handler == null || handler.isBlank()) {
            throw new TemplateException(logicalId + " has no Handler");
        }
        String timeout = intrinsics.string(properties.getOrDefault("Timeout", 3), logicalId + ".Timeout");
        String memory = intrinsics.string(properties.getOrDefault("MemorySize", 128), logicalId + ".MemorySize");
        Map<String, String> environment = new LinkedHashMap<>();
        Object variables = section(section(properties, "Environment"), "Variables");
        if (intrinsics.resolve(variables, logicalId + ".Environment.Variables") instanceof Map<?, ?> resolved) {
            resolved.forEach((name, value) -> {
                if (value instanceof Map || value instanceof List) {
                    throw new TemplateException(logicalId + ".Environment." + name + " is not a text value: " + value);
                }
                environment.put(String.valueOf(name), value == null ? "" : String.valueOf(value));
            });
        }
        return new FunctionDefinition(logicalId, functionName(logicalId), handler,
                Duration.ofSeconds(wholeNumber(timeout, logicalId + ".Timeout")),
                wholeNumber(memory, logicalId + ".MemorySize"), environment, events, policies(logicalId, properties, events));
    }

    /**
     * The statements of the function's role: the template's AWS::IAM::Role its Role names, or the
     * one SAM makes from its Policies; none known when its Role is given any other way.
     */
    private Optional<List<PolicyStatement>> policies(String logicalId, Map<String, Object> properties, List<EventSource> events) {
        Object role = properties.get("Role");
        if (role != null) {
            Optional<String> roleId = roleOfTemplate(role);
            if (roleId.isEmpty()) {
                warn(logicalId + ": its Role is not an AWS::IAM::Role of this template; its AWS calls are not checked against IAM here");
                return Optional.empty();
            }
            return Optional.of(SamPolicies.roleStatements(roleId.get(), properties(resources.get(roleId.get())), intrinsics,
                    this::managedPolicyDocument, this::warn));
        }
        List<PolicyStatement> statements = new ArrayList<>(
                SamPolicies.statements(logicalId + ".Policies", properties.get("Policies"), intrinsics, this::warn));
        if (events.stream().anyMatch(EventSource.Queue.class::isInstance)) {
            statements.add(SamPolicies.SQS_EVENT_SOURCE);
        }
        return Optional.of(statements);
    }

    /** The document of the template's AWS::IAM::ManagedPolicy that a Ref resolved to (its logical id); empty for any other. */
    private Optional<Map<?, ?>> managedPolicyDocument(String reference) {
        Map<String, Object> resource = resources.get(reference);
        if (resource == null || !"AWS::IAM::ManagedPolicy".equals(resource.get("Type"))) {
            return Optional.empty();
        }
        return Optional.of((Map<?, ?>) intrinsics.resolve(properties(resource).get("PolicyDocument"), reference + ".PolicyDocument"));
    }

    /** The logical id of the AWS::IAM::Role a function's {@code Role: !GetAtt X.Arn} names. */
    private Optional<String> roleOfTemplate(Object role) {
        if (!(role instanceof Map<?, ?> map && map.get("Fn::GetAtt") instanceof List<?> target && target.size() == 2
                && "Arn".equals(target.get(1)))) {
            return Optional.empty();
        }
        String logicalId = String.valueOf(target.get(0));
        Map<String, Object> resource = resources.get(logicalId);
        return resource != null && "AWS::IAM::Role".equals(resource.get("Type")) ? Optional.of(logicalId) : Optional.empty();
    }

    private String functionName(String logicalId) {
        Object declared = properties(resources.get(logicalId)).get("FunctionName");
        String name = declared == null ? null : intrinsics.string(declared, logicalId + ".FunctionName");
        return name != null ? name : intrinsics.stack().name() + "-" + logicalId;
    }

    private String functionArn(String name) {
        return "arn:aws:lambda:" + intrinsics.stack().region() + ":" + intrinsics.stack().accountId() + ":function:" + name;
    }

    private List<EventSource> samEvents(String function, Map<String, Object> events) {
        List<EventSource> sources = new ArrayList<>();
        events.forEach((eventName, event) -> {
            if (!(event instanceof Map<?, ?> raw)) {
                throw new TemplateException(function + ".Events." + eventName + " is not a mapping");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> definition = (Map<String, Object>) raw;
            String where = function + ".Events." + eventName;
            String type = intrinsics.string(definition.get("Type"), where + ".Type");
            Map<String, Object> properties = section(definition, "Properties");
            switch (type == null ? "" : type) {
                case "HttpApi" -> sources.add(httpRoute(where, properties));
                case "Schedule", "ScheduleV2" -> schedule(where, properties, type).ifPresent(sources::add);
                case "SQS" -> sqs(where, properties).ifPresent(sources::add);
                default -> warn(where + ": event type " + type + " is not wired locally");
            }
        });
        return sources;
    }

    private EventSource.HttpRoute httpRoute(String where, Map<String, Object> properties) {
        String path = intrinsics.string(properties.get("Path"), where + ".Path");
        String method = intrinsics.string(properties.get("Method"), where + ".Method");
        if (path == null && method == null) {
            return new EventSource.HttpRoute(where, "ANY", "$default");
        }
        if (path == null || method == null) {
            throw new TemplateException(where + " needs both Path and Method (or neither, for $default)");
        }
        String verb = method.toUpperCase(Locale.ROOT);
        if (verb.equals("*") || verb.equals("X-AMAZON-APIGATEWAY-ANY-METHOD")) {
            verb = "ANY";
        }
        return new EventSource.HttpRoute(where, verb, path);
    }

    private Optional<EventSource> schedule(String where, Map<String, Object> properties, String type) {
        String expression = intrinsics.string(
                properties.get(type.equals("Schedule") ? "Schedule" : "ScheduleExpression"), where + ".Schedule");
        if (expression == null) {
            throw new TemplateException(where + " has no schedule expression");
        }
        if (!enabled(properties, where)) {
            return Optional.empty();
        }
        String input = properties.containsKey("Input") ? intrinsics.string(properties.get("Input"), where + ".Input") : null;
        return Optional.of(new EventSource.Schedule(where, expression, input));
    }

    private Optional<EventSource> sqs(String where, Map<String, Object> properties) {
        if (!enabled(properties, where)) {
            return Optional.empty();
        }
        if (properties.containsKey("FilterCriteria")) {
            warn(where + ": FilterCriteria is ignored locally; every message is delivered");
        }
        String queueArn = intrinsics.string(properties.get("Queue"), where + ".Queue");
        if (queueArn == null || !queueArn.startsWith("arn:aws:sqs:")) {
            throw new TemplateException(where + ".Queue is not an SQS queue ARN: " + queueArn);
        }
        return Optional.of(queueSource(where, queueArn, properties));
    }

    private EventSource.Queue queueSource(String where, String queueArn, Map<String, Object> properties) {
        int batchSize = wholeNumber(intrinsics.string(properties.getOrDefault("BatchSize", 10), where + ".BatchSize"), where + ".BatchSize");
        int window = wholeNumber(intrinsics.string(properties.getOrDefault("MaximumBatchingWindowInSeconds", 0),
                where + ".MaximumBatchingWindowInSeconds"), where + ".MaximumBatchingWindowInSeconds");
        Object scaling = section(properties, "ScalingConfig").get("MaximumConcurrency");
        int concurrency = scaling == null ? DEFAULT_MAXIMUM_CONCURRENCY
                : wholeNumber(intrinsics.string(scaling, where + ".ScalingConfig"), where + ".ScalingConfig.MaximumConcurrency");
        boolean partial = intrinsics.resolve(properties.get("FunctionResponseTypes"), where + ".FunctionResponseTypes")
                instanceof List<?> types
                && types.contains("ReportBatchItemFailures");
        return new EventSource.Queue(where, queueArn, batchSize, Duration.ofSeconds(window), concurrency, partial);
    }

    private record Binding(String function, EventSource source) {}

    private Optional<Binding> mapping(String logicalId, Map<String, Object> properties, java.util.Set<String> functions) {
        Optional<String> function = targetFunction(properties.get("FunctionName"), functions);
        if (function.isEmpty()) {
            warn(logicalId + ": FunctionName names no function of this template");
            return Optional.empty();
        }
        String source = intrinsics.string(properties.get("EventSourceArn"), logicalId + ".EventSourceArn");
        if (source == null || !source.startsWith("arn:aws:sqs:")) {
            warn(logicalId + ": only SQS event source mappings are wired locally");
            return Optional.empty();
        }
        if (!enabled(properties, logicalId)) {
            return Optional.empty();
        }
        return Optional.of(new Binding(function.get(), queueSource(logicalId, source, properties)));
    }

    private List<Binding> rule(String logicalId, Map<String, Object> properties, java.util.Set<String> functions) {
        String expression = intrinsics.string(properties.get("ScheduleExpression"), logicalId + ".ScheduleExpression");
        Object state = intrinsics.resolve(properties.get("State"), logicalId + ".State");
        if (expression == null || "DISABLED".equals(state)) {
            return List.of();
        }
        List<Object> targets = new ArrayList<>();
        if (properties.get("Targets") instanceof List<?> list) {
            targets.addAll(list);
        } else if (properties.get("Target") != null) {
            targets.add(properties.get("Target"));
        }
        List<Binding> bindings = new ArrayList<>();
        for (Object target : targets) {
            if (target instanceof Map<?, ?> map) {
                Object input = map.get("Input") == null ? null : intrinsics.string(map.get("Input"), logicalId + ".Input");
                targetFunction(map.get("Arn"), functions).ifPresent(function -> bindings.add(new Binding(function,
                        new EventSource.Schedule(logicalId, expression, (String) input))));
            }
        }
        return bindings;
    }

    /** The function a FunctionName/Arn points at: by Ref or GetAtt (aliases included), name, or ARN. */
    private Optional<String> targetFunction(Object raw, java.util.Set<String> functions) {
        if (raw instanceof Map<?, ?> map && map.size() == 1) {
            Object argument = map.values().iterator().next();
            String candidate = argument instanceof List<?> list && !list.isEmpty() ? String.valueOf(list.getFirst())
                    : String.valueOf(argument);
            int dot = candidate.indexOf('.');
            String logicalId = dot < 0 ? candidate : candidate.substring(0, dot);
            if (functions.contains(logicalId)) {
                return Optional.of(logicalId);
            }
        }
        String resolved = raw == null ? null : intrinsics.string(raw, "function reference");
        if (resolved == null) {
            return Optional.empty();
        }
        for (String function : functions) {
            String name = functionName(function);
            String arn = functionArn(name);
            if (resolved.equals(name) || resolved.equals(arn) || resolved.startsWith(arn + ":")
                    || resolved.startsWith(name + ":")) {
                return Optional.of(function);
            }
        }
        return Optional.empty();
    }

    private boolean enabled(Map<String, Object> properties, String where) {
        Object enabled = intrinsics.resolve(properties.get("Enabled"), where + ".Enabled");
        Object state = intrinsics.resolve(properties.get("State"), where + ".State");
        boolean on = !(enabled != null && "false".equalsIgnoreCase(String.valueOf(enabled)))
                && !(state != null && "DISABLED".equalsIgnoreCase(String.valueOf(state)));
        if (!on) {
            warn(where + " is disabled in the template");
        }
        return on;
    }

    private void warn(String warning) {
        if (!warnings.contains(warning)) {
            warnings.add(warning);
        }
    }

    // ---- helpers

    private static Map<String, Object> parameters(Map<String, Object> declared, Map<String, String> overrides) {
        Map<String, Object> values = new LinkedHashMap<>();
        declared.forEach((name, definition) -> {
            Map<String, Object> parameter = definition instanceof Map<?, ?> m ? castMap(m) : Map.of();
            Object value = overrides.containsKey(name) ? overrides.get(name) : parameter.get("Default");
            String text = value == null ? "" : String.valueOf(value);
            String type = String.valueOf(parameter.getOrDefault("Type", "String"));
            if (type.equals("CommaDelimitedList") || type.startsWith("List<")) {
                values.put(name, text.isEmpty() ? List.of() : List.of(text.split("\\s*,\\s*")));
            } else {
                values.put(name, text);
            }
        });
        overrides.forEach((name, value) -> {
            if (!declared.containsKey(name)) {
                throw new TemplateException("parameter override " + name + " names no parameter of the template");
            }
        });
        return values;
    }

    static Map<String, Object> section(Map<String, Object> parent, String key) {
        Object value = parent == null ? null : parent.get(key);
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map<?, ?> map)) {
            throw new TemplateException(key + " is not a mapping");
        }
        return castMap(map);
    }

    private static Map<String, Object> properties(Map<String, Object> resource) {
        return section(resource, "Properties");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> castMap(Map<?, ?> map) {
        return (Map<String, Object>) map;
    }

    private static int wholeNumber(String value, String where) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException | NullPointerException e) {
            throw new TemplateException(where + " must be a whole number: " + value);
        }
    }

    private static String toJson(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
