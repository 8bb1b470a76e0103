package dev.runner.bench.coldstart;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * A function's /var/task. Lambda unpacks the deployment package there and its runtime loads
 * classes from that directory and from {@code lib/*.jar} beneath it: an uber jar runs as loose
 * class files, a zip of {@code lib/*.jar} as jars.
 */
final class TaskRoot {

    private TaskRoot() {}

    /**
     * The task root for a deployment package: a directory is used as it is; a jar or zip is
     * unpacked as Lambda does, or, with {@code jarInLib}, kept whole in {@code lib/} (how the
     * classes load from a zip-of-jars package).
     */
    static Path of(Path code, boolean jarInLib, Path workDir) {
        if (Files.isDirectory(code)) {
            return code;
        }
        if (!Files.isRegularFile(code)) {
            throw new IllegalStateException("no deployment package at " + code.toAbsolutePath()
                    + " (./mvnw -pl bench -am package builds functions/target/runner-functions.zip)");
        }
        try {
            Path root = Files.createTempDirectory(workDir, "task-");
            if (jarInLib) {
                Files.createDirectories(root.resolve("lib"));
                Files.copy(code, root.resolve("lib").resolve(code.getFileName()));
            } else {
                unzip(code, root);
            }
            return root;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lay out " + code, e);
        }
    }

    /**
     * A task root holding only the hello-world handlers (the baselines) and, in {@code lib/}, the
     * jars of {@code helloLib} (the event classes).
     */
    static Path hello(Path workDir, Path helloLib) {
        try {
            Path root = Files.createTempDirectory(workDir, "task-hello-");
            if (Files.isDirectory(helloLib)) {
                Files.createDirectories(root.resolve("lib"));
                try (var jars = Files.list(helloLib)) {
                    for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).toList()) {
                        Files.copy(jar, root.resolve("lib").resolve(jar.getFileName()));
                    }
                }
            }
            copyClasses(root, List.of(HelloFunction.class, HelloSqsFunction.class, HelloStreamFunction.class));
            return root;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A task root holding the functions' libraries ({@code lib/} of {@code functionsRoot}, laid out by
     * {@link #of}) and {@link FloorFunction} instead of Runner's code: the libraries' own floor.
     */
    static Path floor(Path functionsRoot, Path workDir) {
        try {
            Path lib = functionsRoot.resolve("lib");
            if (!Files.isDirectory(lib) || !hasRunnerJar(lib)) {
                throw new IllegalStateException("--floor takes its libraries from the zip package's lib/ (functions/target/runner-functions.zip);"
                        + " " + functionsRoot + " has no lib/ of jars with Runner's among them (--jar-in-lib, or a jar or directory given to --code)");
            }
            Path root = Files.createTempDirectory(workDir, "task-floor-");
            Files.createDirectories(root.resolve("lib"));
            try (var jars = Files.list(lib)) {
                for (Path jar : jars.filter(p -> p.toString().endsWith(".jar") && !isRunnerJar(p)).toList()) {
                    Files.copy(jar, root.resolve("lib").resolve(jar.getFileName()));
                }
            }
            copyClasses(root, List.of(FloorFunction.class));
            return root;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean isRunnerJar(Path jar) {
        return jar.getFileName().toString().startsWith("runner-") && jar.toString().endsWith(".jar");
    }

    private static boolean hasRunnerJar(Path lib) throws IOException {
        try (var jars = Files.list(lib)) {
            return jars.anyMatch(TaskRoot::isRunnerJar);
        }
    }

    /** Copies these classes' files, and their member classes' (an enum, a record), under {@code root}. */
    private static void copyClasses(Path root, List<Class<?>> classes) throws IOException {
        for (Class<?> handler : classes) {
            copyClasses(root, List.of(handler.getDeclaredClasses()));
            String resource = handler.getName().replace('.', '/') + ".class";
            try (InputStream in = handler.getClassLoader().getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException(resource + " is not on the classpath");
                }
                Path target = root.resolve(resource);
                Files.createDirectories(target.getParent());
                Files.copy(in, target);
            }
        }
    }

    private static void unzip(Path archive, Path root) throws IOException {
        try (var zip = new ZipInputStream(Files.newInputStream(archive))) {
            for (ZipEntry entry; (entry = zip.getNextEntry()) != null; ) {
                Path target = root.resolve(entry.getName()).normalize();
                if (!target.startsWith(root)) {
                    throw new IOException("entry outside the archive root: " + entry.getName());
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                } else {
                    Files.createDirectories(target.getParent());
                    Files.copy(zip, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}
