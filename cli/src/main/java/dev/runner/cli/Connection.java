package dev.runner.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Where the CLI sends its calls and with which key (docs/cli.md, keys and endpoints): the endpoint must be
 * {@code https}, or {@code http} on this machine (the key would travel in clear to any other host) unless
 * {@code --allow-insecure-http} says the network is the operator's own; the key comes from {@code --api-key-file},
 * {@code RUNNER_API_KEY} or a prompt, and {@code --api-key} still works for scripts, with a warning (the key shows
 * in {@code ps} and the shell's history).
 */
final class Connection {

    static final String DEFAULT_ENDPOINT = "http://localhost:3000";

    /** Asks for a key at the terminal without echoing it; empty when there is no terminal to ask at. */
    @FunctionalInterface
    interface KeyPrompt {
        Optional<String> ask(String prompt);

        /** The JVM's console: none when input or output is not a terminal (a pipe, CI, a test). */
        KeyPrompt CONSOLE = prompt -> {
            java.io.Console console = System.console();
            if (console == null) {
                return Optional.empty();
            }
            char[] typed = console.readPassword("%s", prompt);
            return typed == null ? Optional.empty() : Optional.of(new String(typed));
        };
    }

    /** The command line asks for what the CLI will not do: exit 2 with the reason. */
    static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    private static final Pattern IPV4 = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");

    private Connection() {}

    /** The endpoint to call: the flag's, else RUNNER_ENDPOINT, else the local runtime's; refused when it would send keys in clear. */
    static URI endpoint(URI flag, Map<String, String> environment, boolean allowInsecureHttp) {
        URI endpoint = flag != null ? flag : URI.create(environment.getOrDefault("RUNNER_ENDPOINT", DEFAULT_ENDPOINT).strip());
        String scheme = endpoint.getScheme() == null ? "" : endpoint.getScheme().toLowerCase(Locale.ROOT);
        if (endpoint.getHost() == null || !(scheme.equals("https") || scheme.equals("http"))) {
            throw new Refused("the endpoint must be an https:// URL (or http:// on this machine): " + endpoint);
        }
        if (scheme.equals("http") && !allowInsecureHttp && !onThisMachine(endpoint.getHost())) {
            throw new Refused("http:// would send the API key in clear to " + endpoint.getHost()
                    + ": use https://, or --allow-insecure-http if every hop to it is a network you trust");
        }
        return endpoint;
    }

    /** A loopback address, or the name localhost; no other name is looked up (what it resolves to is not this check's to trust). */
    static boolean onThisMachine(String host) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (bare.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (!IPV4.matcher(bare).matches() && !bare.contains(":")) {
            return false;
        }
        try {
            return InetAddress.getByName(bare).isLoopbackAddress(); // a literal: no lookup
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The key to send, from the first source given: {@code --api-key} (warned about on {@code err}), {@code --api-key-file}
     * (its first line; warned about when others may read the file), {@code RUNNER_API_KEY}, else the prompt. Empty when
     * none gives one: the call goes without, and the API answers 401.
     */
    static Optional<String> key(String flag, Path file, Map<String, String> environment, KeyPrompt prompt, URI endpoint,
                                PrintWriter err) {
        if (flag != null) {
            err.println("runner: warning: --api-key shows the key to anyone who lists processes or reads the shell's history;"
                    + " use RUNNER_API_KEY, --api-key-file or the prompt");
            err.flush();
            return nonBlank(flag);
        }
        if (file != null) {
            return Optional.of(fromFile(file, err));
        }
        Optional<String> fromEnvironment = nonBlank(environment.get("RUNNER_API_KEY"));
        if (fromEnvironment.isPresent()) {
            return fromEnvironment;
        }
        return prompt.ask("API key for " + endpoint + ": ").flatMap(Connection::nonBlank);
    }

    private static String fromFile(Path file, PrintWriter err) {
        String key;
        try {
            key = Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse("").strip();
        } catch (IOException e) {
            throw new Refused("--api-key-file " + file + " cannot be read: " + e.getMessage());
        }
        if (key.isEmpty()) {
            throw new Refused("--api-key-file " + file + " holds no key on its first line");
        }
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
            if (permissions.stream().anyMatch(p -> p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_"))) {
                err.println("runner: warning: " + file + " may be read by other users; chmod 600 it");
                err.flush();
            }
        } catch (UnsupportedOperationException | IOException e) {
            // not a POSIX file system: nothing to say about who else can read it
        }
        return key;
    }

    private static Optional<String> nonBlank(String value) {
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.strip());
    }
}
