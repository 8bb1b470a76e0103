package dev.runner.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Lua headers are the scripts' contracts: they must say what the enum and the bodies do. No I/O beyond the classpath. */
class ScriptTest {

    private static final Pattern KEY = Pattern.compile("KEYS\\[(\\d+)]");
    private static final Pattern ARG = Pattern.compile("ARGV\\[(\\d+)(\\.\\.)?]");

    @ParameterizedTest
    @EnumSource(Script.class)
    void headerDeclaresTheKeyCountOfTheEnum(Script script) {
        String header = header(script);
        var declared = numbers(KEY, header);
        assertEquals(script.keyCount(), declared.size(), script + " header keys " + declared);
        assertEquals(script.keyCount(), declared.isEmpty() ? 0 : declared.last(), script + " header keys " + declared);
        assertTrue(script.resource().endsWith("-" + script.keyCount() + ".lua"), script.resource());
    }

    @ParameterizedTest
    @EnumSource(Script.class)
    void bodyUsesOnlyDeclaredKeysAndArguments(Script script) {
        String header = header(script);
        String body = script.body().substring(script.body().indexOf("]]") + 2);
        var usedKeys = numbers(KEY, body);
        assertTrue(usedKeys.isEmpty() || usedKeys.last() <= script.keyCount(), script + " uses keys " + usedKeys);

        var declaredArgs = numbers(ARG, header);
        boolean variadic = ARG.matcher(header).results().anyMatch(m -> m.group(2) != null);
        var usedArgs = numbers(ARG, body);
        if (!variadic && !usedArgs.isEmpty()) {
            assertTrue(usedArgs.last() <= declaredArgs.last(), script + " uses ARGV " + usedArgs + ", declares " + declaredArgs);
        }
    }

    @ParameterizedTest
    @EnumSource(Script.class)
    void headerHasDescriptionInputAndOutput(Script script) {
        String header = header(script);
        assertTrue(header.contains("Input:"), script + " header lacks Input:");
        assertTrue(header.contains("Output:"), script + " header lacks Output:");
    }

    @Test
    void everyLuaFileIsAnEnumEntry() throws Exception {
        var dir = java.nio.file.Path.of(Script.class.getClassLoader().getResource("redis").toURI());
        try (var files = java.nio.file.Files.list(dir)) {
            var onDisk = files.map(f -> "redis/" + f.getFileName()).filter(n -> n.endsWith(".lua")).sorted().toList();
            var listed = java.util.Arrays.stream(Script.values()).map(Script::resource).sorted().toList();
            assertEquals(listed, onDisk);
        }
    }

    @Test
    void shaIsTheBodysSha1() {
        for (Script script : Script.values()) {
            assertEquals(40, script.sha().length(), script.name());
        }
    }

    private static String header(Script script) {
        String body = script.body();
        assertTrue(body.startsWith("--[["), script + " does not start with a --[[ header");
        int end = body.indexOf("]]");
        assertTrue(end > 0, script + " header is not closed");
        return body.substring(0, end);
    }

    private static TreeSet<Integer> numbers(Pattern pattern, String text) {
        var found = new TreeSet<Integer>();
        Matcher matcher = pattern.matcher(text);
        while (matcher.find()) {
            found.add(Integer.parseInt(matcher.group(1)));
        }
        return found;
    }
}
