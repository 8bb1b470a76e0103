package dev.runner.functions;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a function's class list primes before a SnapStart checkpoint (lists in test resources,
 * {@code prime/ClassPrimingTest.classes} and {@code prime/Failing.classes}), and that the lists the
 * functions ship still name Runner's classes.
 */
class ClassPrimingTest {

    private static volatile boolean plainInitialised;
    private static volatile boolean generatorInitialised;

    static final class Plain {
        static {
            plainInitialised = true;
        }
    }

    /** Its generator, made before a snapshot, would be shared by every environment restored from it. */
    static final class HoldsAGenerator {
        static final SecureRandom RANDOM = new SecureRandom();

        static {
            generatorInitialised = true;
        }
    }

    static final class FailsToInitialise {
        static final int VALUE = Integer.parseInt("not a number");
    }

    /** Its simple name picks prime/Failing.classes. */
    static final class Failing {}

    @Test
    void listedClassesAreInitialisedThoseWithAStaticGeneratorOnlyLoadedAndStaleNamesSkipped() {
        ClassPriming.Primed primed = ClassPriming.load(ClassPrimingTest.class);

        assertTrue(plainInitialised, "a listed class is initialised");
        assertFalse(generatorInitialised, "a class holding a random generator is not initialised into the snapshot");
        assertEquals(1, primed.initialised(), "the JDK's own classes are not primed");
        assertEquals(1, primed.loadedOnly());
        assertEquals(List.of("dev.runner.functions.NoLongerThere", "dev.runner.functions.ClassPrimingTest$$Lambda/0x000000007c31f1d8"),
                primed.missing(), "renamed classes and lambdas' hidden classes are skipped, blank lines and comments ignored");
    }

    @Test
    void aClassWhoseInitialiserFailsFailsTheCheckpointNamingIt() {
        var failure = assertThrows(IllegalStateException.class, () -> ClassPriming.load(Failing.class));

        assertTrue(failure.getMessage().contains("ClassPrimingTest$FailsToInitialise"), failure.getMessage());
    }

    @Test
    void aFunctionWithoutAListPrimesNothing() {
        assertEquals(new ClassPriming.Primed(0, 0, List.of()), ClassPriming.load(MigrateFunction.class));
    }

    @Test
    void theListsTheFunctionsShipNameRunnersClassesAsTheyAreNow() throws IOException {
        List<String> gone = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> lists = Files.list(Path.of("src/main/resources/dev/runner/functions/prime"))) {
            for (Path list : lists.toList()) {
                for (String name : Files.readAllLines(list)) {
                    if (!name.startsWith("dev.runner.")) {
                        continue;
                    }
                    checked++;
                    try {
                        Class.forName(name, false, getClass().getClassLoader());
                    } catch (ClassNotFoundException e) {
                        gone.add(list.getFileName() + ": " + name);
                    }
                }
            }
        }
        assertTrue(checked > 100, "the lists were read: " + checked);
        assertEquals(List.of(), gone, "regenerate the lists: ColdStart --snapstart --write-class-lists (bench/README.md)");
    }
}
