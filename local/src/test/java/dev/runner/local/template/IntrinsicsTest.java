package dev.runner.local.template;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Each intrinsic form the local runtime evaluates, written as template.yaml writes it (short form). */
class IntrinsicsTest {

    private static final String CONDITIONS = """
            Conditions:
              IsProd: !Equals [!Ref Stage, prod]
              IsDev: !Equals [!Ref Stage, dev]
              Broken: !Equals [!GetAZs '', us-east-1a]
            """;

    /** A queue named Jobs is the template's one resource. */
    private static final Intrinsics.Resources RESOURCES = new Intrinsics.Resources() {
        @Override
        public boolean contains(String logicalId) {
            return logicalId.equals("Jobs");
        }

        @Override
        public Object ref(String logicalId) {
            return "http://sqs.local/jobs";
        }

        @Override
        public Object getAtt(String logicalId, String attribute) {
            return logicalId + "/" + attribute;
        }
    };

    private final Intrinsics intrinsics = intrinsics();

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            !GetAZs ''                        | Fn::GetAZs
            !Base64 text                      | Fn::Base64
            !FindInMap [Stages, dev, Size]    | Fn::FindInMap
            !ImportValue shared-vpc           | Fn::ImportValue
            !Or [!Condition IsProd, !Condition IsDev] | Fn::Or
            !Cidr [10.0.0.0/16, 2, 8]         | Fn::Cidr
            {'Fn::ToJsonString': {a: b}}      | Fn::ToJsonString
            {'Fn::Length': [a, b]}            | Fn::Length
            !Ref AWS::StackId                 | AWS::StackId
            !Sub '${AWS::NotificationARNs}'   | AWS::NotificationARNs
            """)
    void aFormOrPseudoParameterTheLocalRuntimeLacksIsRefusedNamingItselfAndWhere(String expression, String form) {
        var error = assertThrows(TemplateException.class, () -> value("Jobs.Properties.Tags", expression));
        assertEquals(form + " is not supported by the local runtime (Jobs.Properties.Tags)", error.getMessage());
    }

    @Test
    void anUnsupportedFormDeepInsideAValueIsReportedAtTheKeyHoldingIt() {
        var error = assertThrows(TemplateException.class,
                () -> value("Fn.Environment", "{Variables: {ZONES: !Join [',', !GetAZs '']}}"));
        assertEquals("Fn::GetAZs is not supported by the local runtime (Fn.Environment.Variables.ZONES)", error.getMessage());
    }

    @Test
    void anUnsupportedFormInAConditionIsReportedAtTheCondition() {
        var error = assertThrows(TemplateException.class, () -> intrinsics.condition("Broken", "Jobs.Condition"));
        assertEquals("Fn::GetAZs is not supported by the local runtime (Conditions.Broken)", error.getMessage());
    }

    /** Parses {@code expression} as the YAML value of a property and evaluates it. */
    private Object value(String where, String expression) {
        return intrinsics.resolve(CloudFormationYaml.parse("Value: " + expression).get("Value"), where);
    }

    private static Intrinsics intrinsics() {
        Map<String, Object> parameters = Map.of("Stage", "dev", "Count", "3", "Zones", List.of("a", "b"),
                "SecretName", "arn:aws:secretsmanager:us-east-1:000000000000:secret:db");
        var intrinsics = new Intrinsics(Intrinsics.Stack.local(), parameters,
                Template.section(CloudFormationYaml.parse(CONDITIONS), "Conditions"), reference -> "resolved<" + reference + ">");
        intrinsics.resources(RESOURCES);
        return intrinsics;
    }
}
