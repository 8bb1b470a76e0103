package dev.runner.functions.deploy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Both templates pass cfn-lint (the CloudFormation linter, which runs the SAM transform first). */
class TemplateLintIT {

    @ParameterizedTest
    @ValueSource(strings = {"template.yaml", "infra.yaml"})
    void cfnLintFindsNothing(String template) {
        ExternalTool.assumeInstalled("cfn-lint (pip install cfn-lint)", "cfn-lint", "--version");
        var result = ExternalTool.run(List.of("cfn-lint", "--", template), Duration.ofMinutes(3));
        // Exit status bits: 2 errors, 4 warnings, 8 informational; every finding is listed.
        assertEquals(0, result.exitCode(), "cfn-lint " + template + ":\n" + result.output());
    }
}
