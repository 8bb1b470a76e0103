package dev.runner;

import dev.runner.api.ManagementApi;
import dev.runner.item.ItemStatus;
import dev.runner.run.RunStatus;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contracts the code relies on live in docs/ and the code cites them there: no Markdown file and
 * no code comment points at a document outside the repository (a relative path that leaves it, or the
 * design notes by name), every docs/ file a file names exists, every Markdown link (and
 * its #section) resolves, and docs/data-model.md and docs/management-api.md name what the
 * migrations and the route table hold. No I/O but the repository's files.
 */
class DocumentationTest {

    private static final Path ROOT = repositoryRoot();
    /** The design notes this project started from live outside the repository: citing them sends readers nowhere. */
    private static final Pattern OUTSIDE_DESIGN = Pattern.compile("\\bDESIGN\\b");
    /** A path that goes up a directory first: {@code ../x}, {@code ../../x} (not {@code shared/.../x}, an elision). */
    private static final Pattern RELATIVE_PATH = Pattern.compile("(?<![\\w./$-])(?:\\.\\./)+[\\w.-][\\w./-]*");
    /**
     * Applied migrations cannot change, not even a comment: Flyway checksums every line and refuses to
     * migrate a database whose applied script differs. Their tables are described in docs/data-model.md.
     */
    private static final Set<String> IMMUTABLE = Set.of("shared/src/main/resources/db/migration/V1__core.sql:1");
    private static final Pattern DOCS_PATH = Pattern.compile("(?<![\\w/.-])docs/[\\w./-]*\\w\\.(?:md|png)");
    private static final Pattern MARKDOWN_LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Set<String> SKIPPED_DIRECTORIES = Set.of(".git", "target", "node_modules", ".idea");

    @Test
    void noFileCitesADocumentOutsideTheRepository() {
        List<String> citations = new ArrayList<>();
        for (Path file : textFiles()) {
            if (file.endsWith("DocumentationTest.java")) {
                continue;
            }
            boolean markdown = file.toString().endsWith(".md");
            // Markdown resolves a relative path from its own directory; code comments cite paths from the root, as docs/….
            Path base = markdown ? file.getParent() : ROOT;
            List<String> lines = lines(file);
            for (int i = 0; i < lines.size(); i++) {
                String where = relative(file) + ":" + (i + 1);
                String text = markdown ? lines.get(i) : comment(file, lines.get(i));
                if (IMMUTABLE.contains(where) || text.isEmpty()) {
                    continue;
                }
                if (OUTSIDE_DESIGN.matcher(text).find()) {
                    citations.add(where + ": " + lines.get(i).strip());
                }
                for (Matcher path = RELATIVE_PATH.matcher(text); path.find(); ) {
                    if (!base.resolve(path.group()).normalize().startsWith(ROOT)) {
                        citations.add(where + ": " + path.group());
                    }
                }
            }
        }
        assertEquals(List.of(), citations, "cite the file in the repository that holds the contract instead");
    }

    /** The comment on a line of code (all of it for a comment line), or "" when it has none or the language is not known here. */
    static String comment(Path file, String line) {
        String name = file.getFileName().toString();
        String extension = name.contains(".") ? name.substring(name.lastIndexOf('.') + 1) : "";
        String stripped = line.strip();
        List<String> markers = switch (extension) {
            case "java", "js", "ts", "css" -> List.of("//", "/*", "*");
            case "sql", "lua" -> List.of("--");
            case "xml", "html" -> List.of("<!--");
            case "yaml", "yml", "toml", "properties", "sh", "py", "" -> List.of("#");
            default -> List.of();
        };
        for (String marker : markers) {
            if (stripped.startsWith(marker)) {
                return stripped;
            }
            int trailing = marker.equals("*") ? -1 : line.indexOf(" " + marker + " ");
            if (trailing >= 0) {
                return line.substring(trailing);
            }
        }
        return "";
    }

    @Test
    void everyDocsFileAFileNamesExists() {
        List<String> missing = new ArrayList<>();
        for (Path file : textFiles()) {
            List<String> lines = lines(file);
            for (int i = 0; i < lines.size(); i++) {
                Matcher matcher = DOCS_PATH.matcher(lines.get(i));
                while (matcher.find()) {
                    if (!Files.isRegularFile(ROOT.resolve(matcher.group()))) {
                        missing.add(relative(file) + ":" + (i + 1) + ": " + matcher.group());
                    }
                }
            }
        }
        assertEquals(List.of(), missing);
    }

    @Test
    void everyMarkdownLinkAndSectionResolves() {
        List<String> broken = new ArrayList<>();
        for (Path file : textFiles()) {
            if (!file.toString().endsWith(".md")) {
                continue;
            }
            Matcher matcher = MARKDOWN_LINK.matcher(String.join("\n", lines(file)));
            while (matcher.find()) {
                String link = matcher.group(1);
                if (link.matches("^[a-z]+:.*")) {
                    continue; // https:, mailto:: not ours to check offline
                }
                int hash = link.indexOf('#');
                String target = hash < 0 ? link : link.substring(0, hash);
                Path resolved = target.isEmpty() ? file : file.getParent().resolve(target).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(relative(file) + ": " + link + " (no such file)");
                } else if (hash >= 0 && !anchors(resolved).contains(link.substring(hash + 1))) {
                    broken.add(relative(file) + ": " + link + " (no such section)");
                }
            }
        }
        assertEquals(List.of(), broken);
    }

    @Test
    void theDataModelNamesEveryTableAndColumnTheMigrationsLeave() {
        String model = read(ROOT.resolve("docs/data-model.md"));
        List<String> missing = new ArrayList<>();
        schema().forEach((table, columns) -> {
            String section = section(model, "### `" + table + "`");
            if (section == null) {
                missing.add(table);
                return;
            }
            columns.stream().filter(column -> !section.contains("`" + column + "`")).forEach(column -> missing.add(table + "." + column));
        });
        assertEquals(List.of(), missing, "docs/data-model.md");
        assertTrue(schema().containsKey("execution_items"), "the migrations were read");
    }

    @Test
    void theDataModelNamesEveryStatusAndTrigger() {
        String model = read(ROOT.resolve("docs/data-model.md"));
        List<String> names = new ArrayList<>();
        Arrays.stream(RunStatus.values()).map(RunStatus::wireName).forEach(names::add);
        Arrays.stream(ItemStatus.values()).map(ItemStatus::wireName).forEach(names::add);
        Arrays.stream(Trigger.values()).map(Trigger::wireName).forEach(names::add);
        assertEquals(List.of(), names.stream().filter(name -> !model.contains("`" + name + "`")).toList(), "docs/data-model.md");
    }

    @Test
    void theManagementApiDocumentListsEveryRouteWithItsAccess() {
        List<String> rows = lines(ROOT.resolve("docs/management-api.md")).stream().filter(line -> line.startsWith("| `")).toList();
        var api = new ManagementApi("k", ManagementApi.Backend.none(Clock.systemUTC()));
        List<String> undocumented = new ArrayList<>();
        for (String route : api.routeTable()) {
            String access = route.substring(route.lastIndexOf(' ') + 1).replace('_', ' ');
            String methodAndPath = route.substring(0, route.lastIndexOf(' '));
            Pattern row = Pattern.compile("^\\| [^|]*`" + Pattern.quote(methodAndPath) + "[`? ][^|]*\\| " + Pattern.quote(access) + " \\|.*");
            if (rows.stream().noneMatch(line -> row.matcher(line).matches())) {
                undocumented.add(route);
            }
        }
        assertEquals(List.of(), undocumented, "docs/management-api.md, Routes");
    }

    /** Table → columns, as the migrations leave them, applied in version order. */
    private static Map<String, Set<String>> schema() {
        Path migrations = ROOT.resolve("shared/src/main/resources/db/migration");
        List<Path> scripts;
        try (Stream<Path> files = Files.list(migrations)) {
            scripts = files.filter(f -> f.getFileName().toString().matches("V\\d+__.*\\.sql"))
                    .sorted(Comparator.comparingInt(f -> Integer.parseInt(f.getFileName().toString().replaceAll("^V(\\d+)__.*", "$1"))))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Set<String>> tables = new LinkedHashMap<>();
        Pattern create = Pattern.compile("create table (\\w+) \\((.*?)\\n\\);", Pattern.DOTALL);
        Pattern add = Pattern.compile("alter table (\\w+) add column (?:if not exists )?(\\w+)");
        Pattern drop = Pattern.compile("alter table (\\w+) drop column (\\w+)");
        Pattern dropTable = Pattern.compile("drop table (?:if exists )?(\\w+)");
        Set<String> notColumns = Set.of("primary", "unique", "foreign", "check", "constraint");
        for (Path script : scripts) {
            String sql = read(script).toLowerCase(Locale.ROOT).replaceAll("--[^\\n]*", "");
            Matcher created = create.matcher(sql);
            while (created.find()) {
                Set<String> columns = new LinkedHashSet<>();
                for (String line : created.group(2).split("\\n")) {
                    String[] words = line.strip().split("\\s+");
                    if (!words[0].isEmpty() && words[0].matches("\\w+") && !notColumns.contains(words[0])) {
                        columns.add(words[0]);
                    }
                }
                tables.put(created.group(1), columns);
            }
            for (Matcher m = add.matcher(sql); m.find(); ) {
                tables.get(m.group(1)).add(m.group(2));
            }
            for (Matcher m = drop.matcher(sql); m.find(); ) {
                tables.get(m.group(1)).remove(m.group(2));
            }
            for (Matcher m = dropTable.matcher(sql); m.find(); ) {
                tables.remove(m.group(1));
            }
        }
        return tables;
    }

    /** From a heading line to the next heading of the same or a higher level; null when absent. */
    private static String section(String markdown, String heading) {
        int start = markdown.indexOf("\n" + heading + "\n");
        if (start < 0) {
            return null;
        }
        Matcher next = Pattern.compile("\\n#{2,3} ").matcher(markdown);
        return next.find(start + heading.length() + 1) ? markdown.substring(start, next.start()) : markdown.substring(start);
    }

    /** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens. */
    private static Set<String> anchors(Path file) {
        Set<String> anchors = new LinkedHashSet<>();
        boolean fenced = false;
        for (String line : lines(file)) {
            if (line.startsWith("```")) {
                fenced = !fenced;
            }
            if (!fenced && line.matches("#{1,6} .*")) {
                anchors.add(line.replaceFirst("#+ ", "").strip().toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return anchors;
    }

    private static List<Path> textFiles() {
        List<Path> files = new ArrayList<>();
        try {
            Files.walkFileTree(ROOT, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    return SKIPPED_DIRECTORIES.contains(dir.getFileName().toString()) && !dir.equals(ROOT)
                            ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile() && attrs.size() < 2_000_000 && isText(file)) {
                        files.add(file);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }

    private static boolean isText(Path file) {
        try {
            byte[] bytes = Files.readAllBytes(file);
            for (byte b : bytes) {
                if (b == 0) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> lines(Path file) {
        return read(file).lines().toList();
    }

    private static String read(Path file) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String relative(Path file) {
        return ROOT.relativize(file).toString().replace('\\', '/');
    }

    /** The directory holding docs/ and the parent pom, whether the tests run from the module or the root. */
    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("docs")) && Files.isRegularFile(dir.resolve("pom.xml"))
                    && Files.isRegularFile(dir.resolve("README.md"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root (docs/, pom.xml, README.md) above " + Path.of("").toAbsolutePath());
    }
}
