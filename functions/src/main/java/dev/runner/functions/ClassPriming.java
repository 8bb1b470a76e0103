package dev.runner.functions;

import dev.runner.log.Log;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * Loads and initialises, before a SnapStart checkpoint, the classes a function's first invocation
 * after a restore would load: the snapshot then holds them, and the first request does not pay
 * for reading, verifying and initialising them (≈ 250 classes, half its time, for the item
 * worker). The list is {@code prime/<FunctionClass>.classes} beside the function's class, written
 * by the cold-start bench ({@code ColdStart --snapstart --write-class-lists}) from what a restored
 * start loaded. A stale list only primes less: names that no longer exist are skipped.
 *
 * <p>Not primed: hidden classes (lambdas; they have no name to load) and classes whose
 * initialisation seeds randomness ({@link java.util.UUID}'s holder, the JDK's random sources),
 * which a snapshot would hand to every environment restored from it.
 */
final class ClassPriming {

    private static final Log LOG = Log.of(ClassPriming.class);
    private static final Pattern SEEDS_RANDOMNESS = Pattern.compile(".*(Random|UUID\\$Holder|SeedGenerator|NativePRNG|DRBG).*");

    private ClassPriming() {}

    /** Loads and initialises {@code function}'s listed classes; returns how many. */
    static int load(Class<?> function) {
        String list = "prime/" + function.getSimpleName() + ".classes";
        int loaded = 0;
        int missing = 0;
        try (InputStream in = function.getResourceAsStream(list)) {
            if (in == null) {
                return 0;
            }
            var reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                String name = line.strip();
                if (!primable(name)) {
                    continue;
                }
                try {
                    Class.forName(name, true, function.getClassLoader());
                    loaded++;
                } catch (ClassNotFoundException | LinkageError e) {
                    missing++;
                }
            }
        } catch (IOException e) {
            LOG.warn("class list unreadable; the first invocation loads its classes itself", "list", list, "error", e);
        }
        LOG.info("classes primed for the snapshot", "function", function.getSimpleName(), "loaded", loaded, "missing", missing);
        return loaded;
    }

    static boolean primable(String name) {
        return !name.isEmpty() && !name.startsWith("#") && name.indexOf('/') < 0 && !SEEDS_RANDOMNESS.matcher(name).matches();
    }
}
