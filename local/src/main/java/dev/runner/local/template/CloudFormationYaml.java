package dev.runner.local.template;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.AbstractConstruct;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a CloudFormation/SAM template. The short-form tags ({@code !Ref}, {@code !GetAtt},
 * {@code !Sub} …) become the long form ({@code {"Ref": …}}, {@code {"Fn::GetAtt": [res, attr]}}),
 * so everything downstream handles one shape, exactly as CloudFormation itself does. Tags that
 * {@link Intrinsics} does not evaluate are read too: such a form fails where a value the local
 * runtime needs uses it, not in the parts of the template it never reads.
 */
public final class CloudFormationYaml {

    /** Tags whose long form drops the {@code Fn::} prefix. */
    private static final List<String> BARE = List.of("Ref", "Condition");
    private static final List<String> FUNCTIONS = List.of(
            "GetAtt", "Sub", "Join", "If", "Select", "Equals", "Not", "And", "Or", "FindInMap", "Base64",
            "Split", "GetAZs", "ImportValue", "Cidr", "ToJsonString", "Length", "Transform");

    private CloudFormationYaml() {}

    public static Map<String, Object> parse(String text) {
        var options = new LoaderOptions();
        options.setCodePointLimit(16 * 1024 * 1024);
        options.setAllowDuplicateKeys(false);
        Object document = new Yaml(new TemplateConstructor(options)).load(text);
        if (!(document instanceof Map<?, ?> map)) {
            throw new TemplateException("the template is not a YAML mapping");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> root = (Map<String, Object>) map;
        return root;
    }

    private static final class TemplateConstructor extends SafeConstructor {
        TemplateConstructor(LoaderOptions options) {
            super(options);
            BARE.forEach(name -> yamlConstructors.put(new Tag("!" + name), new Intrinsic(name)));
            FUNCTIONS.forEach(name -> yamlConstructors.put(new Tag("!" + name), new Intrinsic("Fn::" + name)));
        }

        private final class Intrinsic extends AbstractConstruct {
            private final String key;

            Intrinsic(String key) {
                this.key = key;
            }

            @Override
            public Object construct(Node node) {
                Object value = switch (node) {
                    case ScalarNode scalar -> constructScalar(scalar);
                    case SequenceNode sequence -> constructSequence(sequence);
                    case MappingNode mapping -> constructMapping(mapping);
                    default -> throw new TemplateException("unexpected YAML node for !" + key + ": " + node.getNodeId());
                };
                if (key.equals("Fn::GetAtt") && value instanceof String dotted) {
                    int dot = dotted.indexOf('.');
                    if (dot < 0) {
                        throw new TemplateException("!GetAtt needs Resource.Attribute: " + dotted);
                    }
                    value = List.of(dotted.substring(0, dot), dotted.substring(dot + 1));
                }
                Map<String, Object> intrinsic = new LinkedHashMap<>();
                intrinsic.put(key, value);
                return intrinsic;
            }
        }
    }
}
