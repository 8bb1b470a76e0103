package dev.runner.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A script's text as Redis runs it: the resource with every {@code --- @include "path"} line
 * replaced by the included file (BullMQ's convention). Paths are relative to the including file
 * and name a {@code .lua} resource without its extension ({@code "includes/breakerAt"} from
 * {@code redis/} is {@code redis/includes/breakerAt.lua}). Each file is inlined once per script, at
 * its first include, so two includes of one helper define it once; a cycle or a missing file
 * fails the expansion, naming the chain.
 */
final class ScriptSource {

    private static final Pattern INCLUDE = Pattern.compile("(?m)^--- @include \"([^\"]+)\"[ \t]*$");

    private ScriptSource() {}

    /** The expanded text of a classpath resource. */
    static String expand(String resource) {
        return expand(resource, ScriptSource::readClasspath);
    }

    /**
     * @param read a resource's text by its path, or null when there is none
     * @throws IllegalStateException a missing resource (the script's or an include's) or an include cycle
     */
    static String expand(String resource, Function<String, String> read) {
        return expand(resource, read, new ArrayDeque<>(), new HashSet<>());
    }

    private static String expand(String resource, Function<String, String> read, Deque<String> chain, Set<String> inlined) {
        if (chain.contains(resource)) {
            throw new IllegalStateException("include cycle: " + String.join(" -> ", chain) + " -> " + resource);
        }
        String text = read.apply(resource);
        if (text == null) {
            throw new IllegalStateException(chain.isEmpty()
                    ? "script resource missing: " + resource
                    : "unknown include " + resource + " in " + chain.peekLast());
        }
        inlined.add(resource);
        chain.addLast(resource);
        String dir = resource.substring(0, resource.lastIndexOf('/') + 1);
        Matcher include = INCLUDE.matcher(text);
        StringBuilder expanded = new StringBuilder(text.length());
        while (include.find()) {
            String target = dir + include.group(1) + ".lua";
            String replacement = inlined.contains(target) && !chain.contains(target)
                    ? ""
                    : stripTrailingNewline(expand(target, read, chain, inlined));
            include.appendReplacement(expanded, Matcher.quoteReplacement(replacement));
        }
        include.appendTail(expanded);
        chain.removeLast();
        return expanded.toString();
    }

    private static String stripTrailingNewline(String text) {
        return text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    }

    private static String readClasspath(String resource) {
        try (InputStream in = ScriptSource.class.getClassLoader().getResourceAsStream(resource)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("script resource unreadable: " + resource, e);
        }
    }
}
