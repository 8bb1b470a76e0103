package dev.runner.app;

import java.util.function.Supplier;

/** A component of a root, built once, on first use, under the root's lock. */
final class Part<T> {
    private final String name;
    private final Supplier<T> build;
    private final Object lock;
    private volatile T value;

    Part(String name, Supplier<T> build, Object lock) {
        this.name = name;
        this.build = build;
        this.lock = lock;
    }

    String name() {
        return name;
    }

    T get() {
        T built = value;
        if (built == null) {
            synchronized (lock) {
                built = value;
                if (built == null) {
                    built = build.get();
                    value = built;
                }
            }
        }
        return built;
    }

    boolean isBuilt() {
        return value != null;
    }
}
