package dev.runner.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Lua headers are the scripts' contracts: they must say what the enum and the bodies do; and
 * includes expand as BullMQ's do. No I/O beyond the classpath (RedisIT checks the SHAs against
 * Redis' own digest).
 */
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
    void includesAreInlinedOnceWhereTheyAreNamed() {
        Map<String, String> files = Map.of(
                "redis/main.lua", "--[[ header ]]\nlocal a = 1\n--- @include \"includes/f\"\n--- @include \"includes/g\"\nreturn g()\n",
                "redis/includes/f.lua", "local function f() return 1 end\n",
                "redis/includes/g.lua", "--- @include \"f\"\nlocal function g() return f() end\n");
        assertEquals("--[[ header ]]\nlocal a = 1\nlocal function f() return 1 end\n"
                        + "\nlocal function g() return f() end\nreturn g()\n",
                ScriptSource.expand("redis/main.lua", files::get));
    }

    @Test
    void anUnknownIncludeFailsLoudly() {
        Map<String, String> files = Map.of("redis/main.lua", "--- @include \"includes/missing\"\nreturn 1\n");
        var e = assertThrows(IllegalStateException.class, () -> ScriptSource.expand("redis/main.lua", files::get));
        assertEquals("unknown include redis/includes/missing.lua in redis/main.lua", e.getMessage());
    }

    @Test
    void anIncludeCycleFailsLoudly() {
        Map<String, String> files = Map.of(
                "redis/main.lua", "--- @include \"includes/a\"\n",
                "redis/includes/a.lua", "--- @include \"b\"\n",
                "redis/includes/b.lua", "--- @include \"a\"\n");
        var e = assertThrows(IllegalStateException.class, () -> ScriptSource.expand("redis/main.lua", files::get));
        assertEquals("include cycle: redis/main.lua -> redis/includes/a.lua -> redis/includes/b.lua -> redis/includes/a.lua", e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(Script.class)
    void bodyIsTheExpandedResource(Script script) {
        assertFalse(script.body().contains("@include"), script + " still has an include line");
        assertEquals(HexFormat.of().formatHex(sha1(script.body())), script.sha());
    }

    @Test
    void everyIncludeIsIncluded() throws Exception {
        var included = new TreeSet<String>();
        var names = new TreeSet<String>();
        Pattern include = Pattern.compile("@include \"(?:includes/)?([^\"]+)\"");
        try (var files = Files.walk(resourceDir())) {
            for (Path file : files.filter(f -> f.toString().endsWith(".lua")).toList()) {
                include.matcher(Files.readString(file)).results().forEach(m -> included.add(m.group(1)));
                if (file.getParent().getFileName().toString().equals("includes")) {
                    names.add(file.getFileName().toString().replace(".lua", ""));
                }
            }
        }
        assertEquals(names, included);
    }

    private static Path resourceDir() throws Exception {
        return Path.of(Script.class.getClassLoader().getResource("redis").toURI());
    }

    private static byte[] sha1(String text) {
        try {
            return java.security.MessageDigest.getInstance("SHA-1").digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
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
