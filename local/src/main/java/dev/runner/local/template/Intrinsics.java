package dev.runner.local.template;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Evaluates CloudFormation intrinsic functions over the long form the YAML reader produces.
 * What a resource answers to {@code Ref} and {@code Fn::GetAtt} is the {@link Resources}'
 * business; pseudo parameters, parameters, conditions and mappings are handled here.
 * {@code {{resolve:…}}} dynamic references are replaced through the given function.
 */
public final class Intrinsics {

    /** What {@code AWS::NoValue} evaluates to: removed from the enclosing map or list. */
    static final Object NO_VALUE = new Object() {
        @Override
        public String toString() {
            return "AWS::NoValue";
        }
    };

    /** The stack the template is deployed as, locally. */
    public record Stack(String name, String region, String accountId) {
        public static Stack local() {
            return new Stack("runner", "us-east-1", "000000000000");
        }
    }

    /** Answers Ref and GetAtt for the template's resources. */
    public interface Resources {
        boolean contains(String logicalId);

        Object ref(String logicalId);

        Object getAtt(String logicalId, String attribute);
    }

    private static final Pattern SUB_VARIABLE = Pattern.compile("\\$\\{([^}]*)}");
    private static final Pattern DYNAMIC_REFERENCE = Pattern.compile("\\{\\{resolve:([^}]*)}}");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Stack stack;
    private final Map<String, Object> parameters;
    private final Map<String, Object> conditionDefinitions;
    private final Map<String, Object> mappings;
    private final UnaryOperator<String> dynamicReferences;
    private final Map<String, Boolean> conditionValues = new HashMap<>();
    private Resources resources;

    /**
     * @param parameters resolved parameter values: a String, or a List of Strings for list types
     * @param dynamicReferences from the text inside {@code {{resolve:…}}} to its local value
     */
    public Intrinsics(Stack stack, Map<String, Object> parameters, Map<String, Object> conditionDefinitions,
                      Map<String, Object> mappings, UnaryOperator<String> dynamicReferences) {
        this.stack = stack;
        this.parameters = Map.copyOf(parameters);
        this.conditionDefinitions = conditionDefinitions;
        this.mappings = mappings;
        this.dynamicReferences = dynamicReferences;
    }

    void resources(Resources resources) {
        this.resources = resources;
    }

    public Stack stack() {
        return stack;
    }

    /** Evaluates every intrinsic inside {@code node}; maps and lists are copied. */
    public Object resolve(Object node) {
        if (node instanceof Map<?, ?> map) {
            if (map.size() == 1) {
                var entry = map.entrySet().iterator().next();
                String key = String.valueOf(entry.getKey());
                if (key.equals("Ref") || key.startsWith("Fn::") || key.equals("Condition") && !(entry.getValue() instanceof Map)) {
                    return function(key, entry.getValue());
                }
            }
            Map<String, Object> resolved = new LinkedHashMap<>();
            map.forEach((k, v) -> {
                Object value = resolve(v);
                if (value != NO_VALUE) {
                    resolved.put(String.valueOf(k), value);
                }
            });
            return resolved;
        }
        if (node instanceof List<?> list) {
            List<Object> resolved = new ArrayList<>();
            for (Object element : list) {
                Object value = resolve(element);
                if (value != NO_VALUE) {
                    resolved.add(value);
                }
            }
            return resolved;
        }
        if (node instanceof String text) {
            return dynamic(text);
        }
        return node;
    }

    /** Resolves to a scalar and renders it as CloudFormation would pass it to a property. */
    public String string(Object node, String where) {
        Object value = resolve(node);
        if (value == null || value == NO_VALUE) {
            return null;
        }
        if (value instanceof Map || value instanceof List) {
            throw new TemplateException(where + ": expected a text value, got " + value);
        }
        return String.valueOf(value);
    }

    public boolean condition(String name) {
        Boolean known = conditionValues.get(name);
        if (known != null) {
            return known;
        }
        if (!conditionDefinitions.containsKey(name)) {
            throw new TemplateException("unknown condition " + name);
        }
        boolean value = truth(resolve(conditionDefinitions.get(name)), "condition " + name);
        conditionValues.put(name, value);
        return value;
    }

    private Object function(String key, Object argument) {
        return switch (key) {
            case "Ref" -> ref(text(resolve(argument), "Ref"));
            case "Condition" -> condition(text(argument, "Condition"));
            case "Fn::GetAtt" -> getAtt(argument);
            case "Fn::Sub" -> sub(argument);
            case "Fn::Join" -> join(list(argument, "Fn::Join", 2));
            case "Fn::Select" -> select(list(argument, "Fn::Select", 2));
            case "Fn::Split" -> split(list(argument, "Fn::Split", 2));
            case "Fn::If" -> ifThen(list(argument, "Fn::If", 3));
            case "Fn::Equals" -> {
                var args = list(argument, "Fn::Equals", 2);
                yield String.valueOf(resolve(args.get(0))).equals(String.valueOf(resolve(args.get(1))));
            }
            case "Fn::Not" -> !truth(resolve(list(argument, "Fn::Not", 1).getFirst()), "Fn::Not");
            case "Fn::And" -> list(argument, "Fn::And", -1).stream().allMatch(c -> truth(resolve(c), "Fn::And"));
            case "Fn::Or" -> list(argument, "Fn::Or", -1).stream().anyMatch(c -> truth(resolve(c), "Fn::Or"));
            case "Fn::FindInMap" -> findInMap(list(argument, "Fn::FindInMap", 3));
            case "Fn::Base64" -> Base64.getEncoder().encodeToString(
                    text(resolve(argument), "Fn::Base64").getBytes(StandardCharsets.UTF_8));
            case "Fn::GetAZs" -> List.of(stack.region() + "a", stack.region() + "b", stack.region() + "c");
            case "Fn::ImportValue" -> "local-import-" + text(resolve(argument), "Fn::ImportValue");
            case "Fn::ToJsonString" -> toJson(resolve(argument));
            case "Fn::Length" -> resolve(argument) instanceof List<?> l ? l.size() : 1;
            default -> throw new TemplateException(key + " is not supported by the local runtime");
        };
    }

    private Object ref(String name) {
        return switch (name) {
            case "AWS::StackName" -> stack.name();
            case "AWS::StackId" -> "arn:aws:cloudformation:" + stack.region() + ":" + stack.accountId()
                    + ":stack/" + stack.name() + "/local";
            case "AWS::Region" -> stack.region();
            case "AWS::AccountId" -> stack.accountId();
            case "AWS::Partition" -> "aws";
            case "AWS::URLSuffix" -> "amazonaws.com";
            case "AWS::NotificationARNs" -> List.of();
            case "AWS::NoValue" -> NO_VALUE;
            default -> {
                if (parameters.containsKey(name)) {
                    yield parameters.get(name);
                }
                if (resources != null && resources.contains(name)) {
                    yield resources.ref(name);
                }
                throw new TemplateException("Ref to unknown parameter or resource " + name);
            }
        };
    }

    private Object getAtt(Object argument) {
        Object resolved = resolve(argument);
        String logicalId;
        String attribute;
        if (resolved instanceof List<?> parts && parts.size() == 2) {
            logicalId = String.valueOf(parts.get(0));
            attribute = String.valueOf(parts.get(1));
        } else if (resolved instanceof String dotted && dotted.contains(".")) {
            logicalId = dotted.substring(0, dotted.indexOf('.'));
            attribute = dotted.substring(dotted.indexOf('.') + 1);
        } else {
            throw new TemplateException("Fn::GetAtt needs [Resource, Attribute]: " + resolved);
        }
        if (resources == null || !resources.contains(logicalId)) {
            throw new TemplateException("Fn::GetAtt of unknown resource " + logicalId);
        }
        return resources.getAtt(logicalId, attribute);
    }

    private String sub(Object argument) {
        String template;
        Map<String, Object> variables = new HashMap<>();
        if (argument instanceof String text) {
            template = text;
        } else if (argument instanceof List<?> parts && parts.size() == 2 && parts.get(1) instanceof Map<?, ?> vars) {
            template = text(parts.get(0), "Fn::Sub");
            vars.forEach((k, v) -> variables.put(String.valueOf(k), resolve(v)));
        } else {
            throw new TemplateException("Fn::Sub needs a string or [string, {variables}]: " + argument);
        }
        Matcher matcher = SUB_VARIABLE.matcher(template);
        var out = new StringBuilder();
        while (matcher.find()) {
            String name = matcher.group(1).trim();
            String replacement;
            if (name.startsWith("!")) {
                replacement = "${" + name.substring(1) + "}";
            } else if (variables.containsKey(name)) {
                replacement = scalar(variables.get(name), "Fn::Sub ${" + name + "}");
            } else if (name.contains(".") && !name.startsWith("AWS::")) {
                replacement = scalar(getAtt(name), "Fn::Sub ${" + name + "}");
            } else {
                replacement = scalar(ref(name), "Fn::Sub ${" + name + "}");
            }
            matcher.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        matcher.appendTail(out);
        return dynamic(out.toString());
    }

    private String join(List<?> args) {
        String delimiter = text(resolve(args.get(0)), "Fn::Join delimiter");
        Object values = resolve(args.get(1));
        if (!(values instanceof List<?> list)) {
            throw new TemplateException("Fn::Join needs a list of values: " + values);
        }
        var parts = new ArrayList<String>();
        list.forEach(v -> parts.add(scalar(v, "Fn::Join")));
        return String.join(delimiter, parts);
    }

    private Object select(List<?> args) {
        int index = Integer.parseInt(text(resolve(args.get(0)), "Fn::Select index"));
        Object values = resolve(args.get(1));
        if (!(values instanceof List<?> list) || index < 0 || index >= list.size()) {
            throw new TemplateException("Fn::Select index " + index + " out of " + values);
        }
        return list.get(index);
    }

    private List<String> split(List<?> args) {
        String delimiter = text(resolve(args.get(0)), "Fn::Split delimiter");
        String source = text(resolve(args.get(1)), "Fn::Split source");
        return List.of(source.split(Pattern.quote(delimiter), -1));
    }

    private Object ifThen(List<?> args) {
        return condition(text(args.get(0), "Fn::If condition")) ? resolve(args.get(1)) : resolve(args.get(2));
    }

    private Object findInMap(List<?> args) {
        String map = text(resolve(args.get(0)), "Fn::FindInMap");
        String first = text(resolve(args.get(1)), "Fn::FindInMap");
        String second = text(resolve(args.get(2)), "Fn::FindInMap");
        if (mappings.get(map) instanceof Map<?, ?> top && top.get(first) instanceof Map<?, ?> inner
                && inner.containsKey(second)) {
            return resolve(inner.get(second));
        }
        throw new TemplateException("Fn::FindInMap: no " + map + "." + first + "." + second);
    }

    private String dynamic(String text) {
        if (!text.contains("{{resolve:")) {
            return text;
        }
        Matcher matcher = DYNAMIC_REFERENCE.matcher(text);
        var out = new StringBuilder();
        while (matcher.find()) {
            matcher.appendReplacement(out, Matcher.quoteReplacement(dynamicReferences.apply(matcher.group(1))));
        }
        matcher.appendTail(out);
        return out.toString();
    }

    private static boolean truth(Object value, String where) {
        if (value instanceof Boolean b) {
            return b;
        }
        if (value instanceof String s && (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false"))) {
            return Boolean.parseBoolean(s);
        }
        throw new TemplateException(where + ": expected a condition, got " + value);
    }

    private static String text(Object value, String where) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof Number || value instanceof Boolean) {
            return String.valueOf(value);
        }
        throw new TemplateException(where + ": expected text, got " + value);
    }

    private static String scalar(Object value, String where) {
        if (value instanceof List<?> || value instanceof Map<?, ?> || value == NO_VALUE || value == null) {
            throw new TemplateException(where + ": expected a text value, got " + value);
        }
        return String.valueOf(value);
    }

    private static List<?> list(Object argument, String where, int size) {
        if (!(argument instanceof List<?> list) || size >= 0 && list.size() != size) {
            throw new TemplateException(where + " needs " + (size < 0 ? "a list" : size + " arguments") + ": " + argument);
        }
        return list;
    }

    private static String toJson(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new TemplateException("Fn::ToJsonString: " + e.getOriginalMessage());
        }
    }
}
