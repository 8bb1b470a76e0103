package dev.runner.guard;

import dev.runner.redis.Script;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reply codes have one name and one number on both sides: admitHandler-10.lua and {@link AdmitCode}. No I/O. */
class AdmitCodeTest {

    private static final Pattern CODES = Pattern.compile("(?m)^local (ADMITTED(?:, [A-Z_]+)*) = ([0-9, ]+)$");

    @Test
    void theScriptNamesEveryCodeAsTheEnumDoes() {
        Matcher line = CODES.matcher(Script.ADMIT_HANDLER.body());
        assertTrue(line.find(), "admitHandler-10.lua declares its codes on one line: local ADMITTED, PAUSED, … = 0, 1, …");
        String[] names = line.group(1).split(", ");
        String[] numbers = line.group(2).split(", ");
        assertEquals(names.length, numbers.length);
        Map<String, Integer> inLua = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            inLua.put(names[i], Integer.parseInt(numbers[i].trim()));
        }
        Map<String, Integer> inJava = new LinkedHashMap<>();
        Arrays.stream(AdmitCode.values()).forEach(code -> inJava.put(code.name(), code.code));
        assertEquals(inJava, inLua);
    }

    @Test
    void everyCodeComesBackFromItsNumber() {
        for (AdmitCode code : AdmitCode.values()) {
            assertEquals(code, AdmitCode.of(code.code));
        }
    }

    @Test
    void anUnknownCodeIsAnError() {
        var e = assertThrows(IllegalStateException.class, () -> AdmitCode.of(8));
        assertEquals("unknown admitHandler code 8", e.getMessage());
    }
}
