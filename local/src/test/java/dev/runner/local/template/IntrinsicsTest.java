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

    // ---- Ref

    @Test
    void refToAParameterIsItsValue() {
        assertEquals("dev", value("!Ref Stage"));
        assertEquals(List.of("a", "b"), value("!Ref Zones"), "a list parameter stays a list");
    }

    @Test
    void refToAResourceIsWhatTheResourceAnswers() {
        assertEquals("http://sqs.local/jobs", value("!Ref Jobs"));
    }

    @Test
    void refToAPseudoParameterIsTheLocalStacks() {
        assertEquals("runner", value("!Ref AWS::StackName"));
        assertEquals("us-east-1", value("!Ref AWS::Region"));
        assertEquals("000000000000", value("!Ref AWS::AccountId"));
        assertEquals("aws", value("!Ref AWS::Partition"));
        assertEquals("amazonaws.com", value("!Ref AWS::URLSuffix"));
    }

    @Test
    void refToNoValueRemovesTheEntryOrElement() {
        assertEquals(Map.of("Kept", "x"), value("{Dropped: !Ref AWS::NoValue, Kept: x}"));
        assertEquals(List.of("x"), value("[!Ref AWS::NoValue, x]"));
    }

    @Test
    void refToAnUnknownNameIsAnError() {
        var error = assertThrows(TemplateException.class, () -> value("!Ref Nope"));
        assertEquals("Ref to unknown parameter or resource Nope (Value)", error.getMessage());
    }

    // ---- Fn::GetAtt

    @Test
    void getAttIsWhatTheResourceAnswersForTheAttribute() {
        assertEquals("Jobs/Arn", value("!GetAtt Jobs.Arn"));
        assertEquals("Jobs/QueueName", value("{'Fn::GetAtt': [Jobs, QueueName]}"), "the long form");
    }

    @Test
    void getAttOfAnUnknownResourceIsAnError() {
        var error = assertThrows(TemplateException.class, () -> value("!GetAtt Nope.Arn"));
        assertEquals("Fn::GetAtt of unknown resource Nope (Value)", error.getMessage());
    }

    // ---- Fn::Sub

    @Test
    void subReplacesParametersPseudoParametersAndAttributes() {
        assertEquals("runner-dev-Jobs/QueueName", value("!Sub '${AWS::StackName}-${Stage}-${Jobs.QueueName}'"));
    }

    @Test
    void subTakesItsOwnVariablesBeforeParameters() {
        assertEquals("prod-jobs", value("!Sub ['${Stage}-${Name}', {Stage: prod, Name: !Select [1, [x, jobs]]}]"));
    }

    @Test
    void subLeavesAnEscapedVariableAsWritten() {
        assertEquals("${Stage} is dev", value("!Sub '${!Stage} is ${Stage}'"));
    }

    @Test
    void subResolvesADynamicReferenceItBuilds() {
        assertEquals("resolved<secretsmanager:dev/key>", value("!Sub '{{resolve:secretsmanager:${Stage}/key}}'"));
    }

    @Test
    void subOfAListIsAnError() {
        var error = assertThrows(TemplateException.class, () -> value("!Sub '${Zones}'"));
        assertEquals("Fn::Sub ${Zones}: expected a text value, got [a, b] (Value)", error.getMessage());
    }

    // ---- Fn::Join

    @Test
    void joinPutsTheDelimiterBetweenTheValues() {
        assertEquals("a,b", value("!Join [',', !Ref Zones]"));
        assertEquals("x/dev/3", value("!Join ['/', [x, !Ref Stage, 3]]"));
    }

    @Test
    void joinOfSomethingOtherThanAListIsAnError() {
        var error = assertThrows(TemplateException.class, () -> value("!Join [',', !Ref Stage]"));
        assertEquals("Fn::Join needs a list of values (Value): dev", error.getMessage());
    }

    // ---- Fn::Select

    @Test
    void selectPicksTheElementAtTheIndex() {
        assertEquals("b", value("!Select [1, !Ref Zones]"));
        assertEquals("a", value("!Select ['0', !Ref Zones]"), "the index may be text");
    }

    @Test
    void selectOutsideTheListIsAnError() {
        var error = assertThrows(TemplateException.class, () -> value("!Select [2, !Ref Zones]"));
        assertEquals("Fn::Select index 2 out of [a, b] (Value)", error.getMessage());
        assertThrows(TemplateException.class, () -> value("!Select [-1, !Ref Zones]"));
    }

    // ---- Fn::Split

    @Test
    void splitCutsAtEveryDelimiterKeepingEmptyPieces() {
        assertEquals(List.of("arn", "aws", "", "db"), value("!Split [':', 'arn:aws::db']"));
        assertEquals(List.of("runner/db"), value("!Split [':', runner/db]"));
        assertEquals(List.of("a", "b", ""), value("!Split [',', 'a,b,']"), "a trailing delimiter too");
    }

    // ---- Fn::If

    @Test
    void ifTakesTheBranchOfItsCondition() {
        assertEquals("development", value("!If [IsDev, development, production]"));
        assertEquals("development", value("!If [IsProd, production, development]"));
    }

    @Test
    void ifWithNoValueOnTheTakenBranchRemovesTheEntry() {
        assertEquals(Map.of(), value("{AlarmActions: !If [IsProd, [!Ref Jobs], !Ref AWS::NoValue]}"));
    }

    @Test
    void ifOnAnUnknownConditionIsAnError() {
        var error = assertThrows(TemplateException.class, () -> value("!If [Nope, a, b]"));
        assertEquals("unknown condition Nope (Value)", error.getMessage());
    }

    // ---- Fn::Equals

    @Test
    void equalsComparesValuesAsText() {
        assertEquals(true, value("!Equals [!Ref Count, 3]"), "a parameter is text, 3 in YAML a number");
        assertEquals(false, value("!Equals [!Ref Stage, prod]"));
        assertEquals(true, value("!Equals [!Select [0, !Split [':', !Ref SecretName]], arn]"),
                "as template.yaml tells a secret's ARN from its name");
    }

    // ---- Fn::Not

    @Test
    void notNegatesACondition() {
        assertEquals(true, value("!Not [!Equals [!Ref Stage, prod]]"));
        assertEquals(false, value("!Not [!Equals [!Ref Stage, dev]]"));
    }

    @Test
    void notOfSomethingOtherThanAConditionIsAnError() {
        var error = assertThrows(TemplateException.class, () -> value("!Not [maybe]"));
        assertEquals("Fn::Not: expected a condition, got maybe (Value)", error.getMessage());
    }

    // ---- Fn::And

    @Test
    void andIsTrueOnlyWhenEveryConditionIs() {
        assertEquals(true, value("!And [!Equals [a, a], !Not [!Equals [a, b]]]"));
        assertEquals(false, value("!And [!Equals [a, a], !Equals [a, b]]"));
    }

    // ---- Condition

    @Test
    void conditionIsTheValueOfTheNamedCondition() {
        assertEquals(true, value("!Condition IsDev"));
        assertEquals(false, value("!And [!Condition IsDev, !Condition IsProd]"));
        assertEquals(true, intrinsics.condition("IsDev", "Jobs.Condition"), "a resource's Condition");
    }

    @Test
    void anUnknownConditionIsAnErrorNamingWhereItIsNamed() {
        var error = assertThrows(TemplateException.class, () -> intrinsics.condition("Nope", "Jobs.Condition"));
        assertEquals("unknown condition Nope (Jobs.Condition)", error.getMessage());
    }

    // ---- what is not evaluated

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

    private Object value(String expression) {
        return value("Value", expression);
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
