package dev.runner.local;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The functions' CloudWatch EMF, as Powertools writes it in Lambda, caught on its way out: in Lambda
 * the functions print EMF lines on stdout and Lambda sends them to CloudWatch Logs, which reads the
 * metrics out of them (docs/metrics.md). Here the runtime's stdout is for its READY line, so while a
 * runtime runs, every stdout line that is an EMF document ({@code {"_aws":…}}) goes to its metrics
 * file instead, byte for byte, and every other line goes on to stdout as before.
 */
final class EmfCapture implements AutoCloseable {

    /** How every EMF document starts: its metadata member first, as the EMF library serializes it. */
    static final String EMF_PREFIX = "{\"_aws\":";

    private final Path file;
    private final PrintStream previous;
    private final OutputStream metrics;

    private EmfCapture(Path file, PrintStream previous, OutputStream metrics) {
        this.file = file;
        this.previous = previous;
        this.metrics = metrics;
    }

    /** Starts routing stdout's EMF lines to {@code file} (created, or emptied). */
    static EmfCapture install(Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            OutputStream metrics = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE);
            PrintStream previous = System.out;
            EmfCapture capture = new EmfCapture(file, previous, metrics);
            System.setOut(new PrintStream(capture.new LineRouter(), true, StandardCharsets.UTF_8));
            return capture;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the metrics file " + file, e);
        }
    }

    Path file() {
        return file;
    }

    /** stdout as it was; the file closed. */
    @Override
    public void close() {
        System.out.flush();
        System.setOut(previous);
        synchronized (metrics) {
            try {
                metrics.close();
            } catch (IOException e) {
                previous.println("metrics file " + file + " did not close: " + e);
            }
        }
    }

    /** Splits what is written into lines, and sends each whole line where it belongs. */
    private final class LineRouter extends OutputStream {
        private final ByteArrayOutputStream line = new ByteArrayOutputStream(512);

        @Override
        public synchronized void write(int b) {
            line.write(b);
            if (b == '\n') {
                route();
            }
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) {
            for (int i = offset; i < offset + length; i++) {
                write(bytes[i]);
            }
        }

        /** A line without its end yet stays until it has one, unless it cannot be EMF. */
        @Override
        public synchronized void flush() {
            if (line.size() > 0 && !startsLikeEmf()) {
                previous.write(line.toByteArray(), 0, line.size());
                line.reset();
            }
            previous.flush();
        }

        private void route() {
            byte[] bytes = line.toByteArray();
            line.reset();
            if (new String(bytes, 0, Math.min(bytes.length, EMF_PREFIX.length()), StandardCharsets.UTF_8).equals(EMF_PREFIX)) {
                synchronized (metrics) {
                    try {
                        metrics.write(bytes);
                        metrics.flush();
                    } catch (IOException e) {
                        previous.println("metrics file " + file + " not written: " + e);
                    }
                }
            } else {
                previous.write(bytes, 0, bytes.length);
            }
        }

        private boolean startsLikeEmf() {
            byte[] bytes = line.toByteArray();
            String start = new String(bytes, 0, Math.min(bytes.length, EMF_PREFIX.length()), StandardCharsets.UTF_8);
            return EMF_PREFIX.startsWith(start);
        }
    }
}
