package dev.runner.bench.coldstart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * CRIU (criu.org) standing in for Lambda SnapStart: it checkpoints a function's JVM once its init
 * is done and restores it, so the harness can time a restored start. CRIU is what CRaC JVMs
 * checkpoint with; Lambda snapshots the whole microVM instead, and restores from a tiered cache,
 * loading pages as they are touched, where CRIU here reads the image from the page cache at once.
 * The figures are therefore a floor for Lambda's restore, not a copy of it.
 *
 * <p>The process keeps its TCP connections across the checkpoint ({@code --tcp-established}, TCP
 * repair): it is waiting on the Runtime API's answer to {@code /restore/next} on one of them, as a
 * function does while Lambda takes its snapshot. Built by {@code bench/snapstart/build-criu}.
 */
final class Criu {

    private static final Path BUILT = Path.of("bench/target/criu/criu");

    private final Path binary;
    /** What build-criu found this machine needs ({@code criu.env} beside the binary: {@code NAME=value} lines). */
    private final Map<String, String> environment;
    private final boolean lazyPages;

    private Criu(Path binary) {
        this(binary, environmentBeside(binary), false);
    }

    private Criu(Path binary, Map<String, String> environment, boolean lazyPages) {
        this.binary = binary;
        this.environment = environment;
        this.lazyPages = lazyPages;
    }

    /**
     * This CRIU restoring on demand, as Lambda restores a snapshot: {@code criu lazy-pages} serves each
     * page when the restored process first touches it (userfaultfd), instead of the restore reading
     * the whole image in first; the daemon then copies the rest in the background and exits.
     */
    Criu lazily() {
        return new Criu(binary, environment, true);
    }

    boolean lazyPages() {
        return lazyPages;
    }

    /**
     * {@code criu.env} beside the binary, if any: on a machine whose hardware breakpoints never fire
     * (some VMs), build-criu found that only {@code CRIU_FAULT=130} (step by syscall instead) works.
     */
    private static Map<String, String> environmentBeside(Path binary) {
        Path file = binary.resolveSibling("criu.env");
        Map<String, String> environment = new HashMap<>();
        if (Files.isRegularFile(file)) {
            try {
                for (String line : Files.readAllLines(file)) {
                    int equals = line.indexOf('=');
                    if (equals > 0) {
                        environment.put(line.substring(0, equals).trim(), line.substring(equals + 1).trim());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file, e);
            }
        }
        return Map.copyOf(environment);
    }

    /** {@code configured} if given, else the one build-criu made, else {@code criu} on the PATH; empty if none runs here. */
    static Optional<Criu> locate(Path configured) {
        List<Path> candidates = new ArrayList<>();
        if (configured != null) {
            candidates.add(configured);
        } else {
            candidates.add(BUILT);
            Stream.of(System.getenv().getOrDefault("PATH", "").split(":")).filter(dir -> !dir.isEmpty())
                    .map(dir -> Path.of(dir, "criu")).forEach(candidates::add);
        }
        return candidates.stream().filter(Files::isExecutable).findFirst().map(Criu::new).filter(Criu::works);
    }

    /** What {@link #locate} found, for the report. */
    Path binary() {
        return binary;
    }

    /**
     * Dumps the process tree rooted at {@code pid} into {@code images}; the process ends. Its TCP
     * connections are kept in repair mode, which sends nothing to the peer when they close: the
     * network lock (firewall rules against the peer's packets meanwhile) is not needed with a peer
     * that is waiting to answer, and would need iptables or nftables here.
     */
    void dump(long pid, Path images) {
        criu(images, "dump.log", "dump", "-t", Long.toString(pid), "-D", images.toString(), "--tcp-established",
                "--network-lock", "skip");
    }

    /** Restores what {@link #dump} wrote; returns once the process runs again (it is then init's child, not ours). */
    void restore(Path images) {
        if (!lazyPages) {
            criu(images, "restore.log", "restore", "-D", images.toString(), "--tcp-established", "--restore-detached");
            return;
        }
        Process pages = start(images, "lazy-pages.log", "lazy-pages", "-D", images.toString());
        try {
            // The restore connects to the daemon's socket in the images directory: it must be listening first.
            Path socket = images.resolve("lazy-pages.socket");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.exists(socket) && pages.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            if (!Files.exists(socket)) {
                pages.destroyForcibly();
                throw new IllegalStateException("criu lazy-pages did not start; see " + images.resolve("lazy-pages.log"));
            }
            criu(images, "restore.log", "restore", "-D", images.toString(), "--tcp-established", "--restore-detached", "--lazy-pages");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            pages.destroyForcibly();
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            pages.destroyForcibly();
            throw e;
        }
    }

    /** The size of a checkpoint's image files, in bytes (CRIU's logs beside them not counted). */
    static long imageBytes(Path images) {
        try (Stream<Path> files = Files.list(images)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".img")).mapToLong(file -> file.toFile().length()).sum();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private boolean works() {
        try {
            Process check = new ProcessBuilder(binary.toString(), "check").redirectErrorStream(true).start();
            String output = new String(check.getInputStream().readAllBytes());
            return check.waitFor(30, TimeUnit.SECONDS) && check.exitValue() == 0 && output.contains("Looks good");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Starts {@code criu arguments…}, logging to {@code log} in {@code images}. */
    private Process start(Path images, String log, String... arguments) {
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        command.addAll(List.of(arguments));
        command.addAll(List.of("-o", log, "-v2"));
        try {
            Files.createDirectories(images);
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(images.resolve(log + ".out").toFile());
            builder.environment().putAll(environment);
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + binary, e);
        }
    }

    private void criu(Path images, String log, String... arguments) {
        try {
            Process process = start(images, log, arguments);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("criu " + arguments[0] + " took over 60 s; see " + images.resolve(log));
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("criu " + arguments[0] + " failed (exit " + process.exitValue() + "); see "
                        + images.resolve(log));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
