package dev.runner.functions;

import dev.runner.log.Log;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Loads and initialises, before a SnapStart checkpoint, the classes a function's first invocation
 * after a restore would load: the snapshot then holds them, and the first request does not pay
 * for reading, verifying and initialising them (AWS's SnapStart guide calls it preloading). The
 * list is {@code prime/<FunctionClass>.classes} beside the function's class, written by the
 * cold-start bench ({@code ColdStart --snapstart --write-class-lists}) from what a restored start
 * loaded; a function without a list primes nothing. A stale list only primes less: names that no
 * longer exist are skipped.
 *
 * <p>Loaded but left uninitialised: classes with a static random generator (a {@link
 * java.util.Random}, {@link java.security.SecureRandom} or any {@link RandomGenerator}, as
 * {@code store.Ids} and {@code security.StandardWebhooks} hold): initialised here, most generators
 * would be in the snapshot with their state, shared by every environment restored from it.
 * Initialised after the restore, each environment makes its own. The JDK's default SecureRandom is
 * safe in a snapshot (it mixes fresh system entropy into each draw; AWS lists it as safe), which
 * {@code Guard} and {@code aws.AwsClients}, initialised at init, rely on; the field's type does not
 * say which algorithm it holds, so every holder is left to the restore. Not primed at all: the
 * JDK's own classes (a list names them for the JDK it was made on, and some start threads or set
 * up {@code ThreadLocalRandom}'s seeder when initialised: {@code sun.nio.ch.Poller} does both).
 */
final class ClassPriming {

    private static final Log LOG = Log.of(ClassPriming.class);

    /** What one priming did. */
    record Primed(int initialised, int loadedOnly, List<String> missing) {}

    private ClassPriming() {}

    /**
     * Loads {@code function}'s listed classes, and initialises those without a static generator.
     *
     * @throws IllegalStateException when a class's initialiser fails: left so, the class would be
     *                               unusable in every environment restored from the snapshot, so the
     *                               snapshot (and the version's publication) must fail instead
     */
    static Primed load(Class<?> function) {
        String list = "prime/" + function.getSimpleName() + ".classes";
        int initialised = 0;
        int loadedOnly = 0;
        List<String> missing = new ArrayList<>();
        try (InputStream in = function.getResourceAsStream(list)) {
            if (in == null) {
                return new Primed(0, 0, List.of());
            }
            var reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                String name = line.strip();
                if (name.isEmpty() || name.startsWith("#") || isJdk(name)) {
                    continue;
                }
                Class<?> loaded;
                try {
                    loaded = Class.forName(name, false, function.getClassLoader());
                    if (holdsAGenerator(loaded)) {
                        loadedOnly++;
                        continue;
                    }
                } catch (ClassNotFoundException | LinkageError stale) {
                    missing.add(name);
                    continue;
                }
                try {
                    Class.forName(name, true, function.getClassLoader());
                    initialised++;
                } catch (ClassNotFoundException e) {
                    missing.add(name);
                } catch (VirtualMachineError e) {
                    throw e;
                } catch (Error e) {
                    // As an exception: Lambda's runtime client reports those (a failed snapshot), not errors.
                    throw new IllegalStateException("class " + name + " failed to initialise before the checkpoint: " + e, e);
                }
            }
        } catch (IOException e) {
            LOG.warn("class list unreadable; the first invocation loads its classes itself", "list", list, "error", e);
        }
        LOG.info("classes primed for the snapshot", "function", function.getSimpleName(), "initialised", initialised,
                "loadedOnly", loadedOnly, "missing", missing.size(), "firstMissing", missing.stream().limit(5).toList());
        return new Primed(initialised, loadedOnly, List.copyOf(missing));
    }

    static boolean isJdk(String name) {
        return name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.") || name.startsWith("sun.")
                || name.startsWith("com.sun.");
    }

    private static boolean holdsAGenerator(Class<?> type) {
        for (Field field : type.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && RandomGenerator.class.isAssignableFrom(field.getType())) {
                return true;
            }
        }
        return false;
    }
}
