package dev.runner.local.template;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Evaluates, over the long form the YAML reader produces, the CloudFormation intrinsic functions
 * template.yaml uses: {@code Ref}, {@code Fn::GetAtt}, {@code Fn::Sub}, {@code Fn::Join},
 * {@code Fn::Select}, {@code Fn::Split}, {@code Fn::If}, {@code Fn::Equals}, {@code Fn::Not},
 * {@code Fn::And}, and {@code Condition} by which one condition names another. Any other form
 * fails naming itself and where it occurs, rather than running the template on a guess.
 * What a resource answers to {@code Ref} and {@code Fn::GetAtt} is the {@link Resources}'
 * business; parameters, conditions and the pseudo parameters template.yaml uses are handled here.
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

    private final Stack stack;
    private final Map<String, Object> parameters;
    private final Map<String, Object> conditionDefinitions;
    private final UnaryOperator<String> dynamicReferences;
    private final Map<String, Boolean> conditionValues = new HashMap<>();
    private Resources resources;

    /**
     * @param parameters resolved parameter values: a String, or a List of Strings for list types
     * @param dynamicReferences from the text inside {@code {{resolve:…}}} to its local value
     */
    public Intrinsics(Stack stack, Map<String, Object> parameters, Map<String, Object> conditionDefinitions,
                      UnaryOperator<String> dynamicReferences) {
        this.stack = stack;
        this.parameters = Map.copyOf(parameters);
        this.conditionDefinitions = conditionDefinitions;
        this.dynamicReferences = dynamicReferences;
    }

    void resources(Resources resources) {
        this.resources = resources;
    }

    public Stack stack() {
        return stack;
    }

    /**
     * Evaluates every intrinsic inside {@code node}; maps and lists are copied.
     *
     * @param where where {@code node} sits in the template ({@code WorkQueue.QueueName}), for errors
     */
    public Object resolve(Object node, String where) {
        if (node instanceof Map<?, ?> map) {
            if (map.size() == 1) {
                var entry = map.entrySet().iterator().next();
                String key = String.valueOf(entry.getKey());
                if (key.equals("Ref") || key.startsWith("Fn::") || key.equals("Condition") && !(entry.getValue() instanceof Map)) {
                    return function(key, entry.getValue(), where);
                }
            }
            Map<String, Object> resolved = new LinkedHashMap<>();
            map.forEach((k, v) -> {
                Object value = resolve(v, where + "." + k);
                if (value != NO_VALUE) {
                    resolved.put(String.valueOf(k), value);
                }
            });
            return resolved;
        }
        if (node instanceof List<?> list) {
            List<Object> resolved = new ArrayList<>();
            for (Object element : list) {
                Object value = resolve(element, where);
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
        Object value = resolve(node, where);
        if (value == null || value == NO_VALUE) {
            return null;
        }
        if (value instanceof Map || value instanceof List) {
            throw new TemplateException(where + ": expected a text value, got " + value);
        }
        return String.valueOf(value);
    }

    /** The value of the condition {@code name}, which {@code where} in the template names. */
    public boolean condition(String name, String where) {
        Boolean known = conditionValues.get(name);
        if (known != null) {
            return known;
        }
        if (!conditionDefinitions.containsKey(name)) {
            throw new TemplateException("unknown condition " + name + at(where));
        }
        boolean value = truth(resolve(conditionDefinitions.get(name), "Conditions." + name), "condition " + name,
                "Conditions." + name);
        conditionValues.put(name, value);
        return value;
    }

    private Object function(String form, Object argument, String where) {
        return switch (form) {
            case "Ref" -> ref(text(resolve(argument, where), form, where), where);
            case "Condition" -> condition(text(argument, form, where), where);
            case "Fn::GetAtt" -> getAtt(arguments(argument, form, 2, where), where);
            case "Fn::Sub" -> sub(argument, where);
            case "Fn::Join" -> join(arguments(argument, form, 2, where), where);
            case "Fn::Select" -> select(arguments(argument, form, 2, where), where);
            case "Fn::Split" -> split(arguments(argument, form, 2, where), where);
            case "Fn::If" -> ifThen(arguments(argument, form, 3, where), where);
            case "Fn::Equals" -> {
                var args = arguments(argument, form, 2, where);
                yield String.valueOf(resolve(args.get(0), where)).equals(String.valueOf(resolve(args.get(1), where)));
            }
            case "Fn::Not" -> !truth(resolve(arguments(argument, form, 1, where).getFirst(), where), form, where);
            case "Fn::And" -> arguments(argument, form, -1, where).stream()
                    .allMatch(c -> truth(resolve(c, where), form, where));
            default -> throw unsupported(form, where);
        };
    }

    private Object ref(String name, String where) {
        return switch (name) {
            case "AWS::StackName" -> stack.name();
            case "AWS::Region" -> stack.region();
            case "AWS::AccountId" -> stack.accountId();
            case "AWS::Partition" -> "aws";
            case "AWS::URLSuffix" -> "amazonaws.com";
            case "AWS::NoValue" -> NO_VALUE;
            default -> {
                if (name.startsWith("AWS::")) {
                    throw unsupported(name, where);
                }
                if (parameters.containsKey(name)) {
                    yield parameters.get(name);
                }
                if (resources != null && resources.contains(name)) {
                    yield resources.ref(name);
                }
                throw new TemplateException("Ref to unknown parameter or resource " + name + at(where));
            }
        };
    }

    private Object getAtt(List<?> args, String where) {
        return attribute(text(resolve(args.get(0), where), "Fn::GetAtt", where),
                text(resolve(args.get(1), where), "Fn::GetAtt", where), where);
    }

    private Object attribute(String logicalId, String attribute, String where) {
        if (resources == null || !resources.contains(logicalId)) {
            throw new TemplateException("Fn::GetAtt of unknown resource " + logicalId + at(where));
        }
        return resources.getAtt(logicalId, attribute);
    }

    private String sub(Object argument, String where) {
        String template;
        Map<String, Object> variables = new HashMap<>();
        if (argument instanceof String text) {
            template = text;
        } else if (argument instanceof List<?> parts && parts.size() == 2 && parts.get(1) instanceof Map<?, ?> vars) {
            template = text(parts.get(0), "Fn::Sub", where);
            vars.forEach((k, v) -> variables.put(String.valueOf(k), resolve(v, where)));
        } else {
            throw new TemplateException("Fn::Sub needs a string or [string, {variables}]" + at(where) + ": " + argument);
        }
        Matcher matcher = SUB_VARIABLE.matcher(template);
        var out = new StringBuilder();
        while (matcher.find()) {
            String name = matcher.group(1).trim();
            String what = "Fn::Sub ${" + name + "}";
            String replacement;
            if (name.startsWith("!")) {
                replacement = "${" + name.substring(1) + "}";
            } else if (variables.containsKey(name)) {
                replacement = scalar(variables.get(name), what, where);
            } else if (name.contains(".") && !name.startsWith("AWS::")) {
                int dot = name.indexOf('.');
                replacement = scalar(attribute(name.substring(0, dot), name.substring(dot + 1), where), what, where);
            } else {
                replacement = scalar(ref(name, where), what, where);
            }
            matcher.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        matcher.appendTail(out);
        return dynamic(out.toString());
    }

    private String join(List<?> args, String where) {
        String delimiter = text(resolve(args.get(0), where), "Fn::Join delimiter", where);
        Object values = resolve(args.get(1), where);
        if (!(values instanceof List<?> list)) {
            throw new TemplateException("Fn::Join needs a list of values" + at(where) + ": " + values);
        }
        var parts = new ArrayList<String>();
        list.forEach(v -> parts.add(scalar(v, "Fn::Join", where)));
        return String.join(delimiter, parts);
    }

    private Object select(List<?> args, String where) {
        String text = text(resolve(args.get(0), where), "Fn::Select index", where);
        Object values = resolve(args.get(1), where);
        int index;
        try {
            index = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            index = -1;
        }
        if (!(values instanceof List<?> list) || index < 0 || index >= list.size()) {
            throw new TemplateException("Fn::Select index " + text + " out of " + values + at(where));
        }
        return list.get(index);
    }

    private List<String> split(List<?> args, String where) {
        String delimiter = text(resolve(args.get(0), where), "Fn::Split delimiter", where);
        String source = text(resolve(args.get(1), where), "Fn::Split source", where);
        return List.of(source.split(Pattern.quote(delimiter), -1));
    }

    private Object ifThen(List<?> args, String where) {
        return condition(text(args.get(0), "Fn::If condition", where), where)
                ? resolve(args.get(1), where) : resolve(args.get(2), where);
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

    private static TemplateException unsupported(String form, String where) {
        return new TemplateException(form + " is not supported by the local runtime" + at(where));
    }

    private static String at(String where) {
        return " (" + where + ")";
    }

    private static boolean truth(Object value, String what, String where) {
        if (value instanceof Boolean b) {
            return b;
        }
        if (value instanceof String s && (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false"))) {
            return Boolean.parseBoolean(s);
        }
        throw new TemplateException(what + ": expected a condition, got " + value + at(where));
    }

    private static String text(Object value, String what, String where) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof Number || value instanceof Boolean) {
            return String.valueOf(value);
        }
        throw new TemplateException(what + ": expected text, got " + value + at(where));
    }

    private static String scalar(Object value, String what, String where) {
        if (value instanceof List<?> || value instanceof Map<?, ?> || value == NO_VALUE || value == null) {
            throw new TemplateException(what + ": expected a text value, got " + value + at(where));
        }
        return String.valueOf(value);
    }

    private static List<?> arguments(Object argument, String form, int size, String where) {
        if (!(argument instanceof List<?> list) || size >= 0 && list.size() != size) {
            throw new TemplateException(form + " needs " + (size < 0 ? "a list" : size + " arguments") + at(where)
                    + ": " + argument);
        }
        return list;
    }
}
