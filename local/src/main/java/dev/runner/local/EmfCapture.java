package dev.runner.local;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * The functions' CloudWatch EMF, as Powertools writes it in Lambda, caught on its way out: in Lambda
 * the functions print EMF lines on stdout and Lambda sends them to CloudWatch Logs, which reads the
 * metrics out of them (docs/metrics.md). Here the runtime's stdout is for its READY line, so while a
 * runtime runs, every stdout line that is an EMF document ({@code {"_aws":…}}) goes to its metrics
 * file instead, byte for byte, and every other line goes on to stdout as before.
 *
 * <p>The sorting happens on a thread of its own, in the order things were written: a function's
 * thread only hands its bytes over, as in Lambda it only writes them to a pipe, so what the local
 * runtime does with them is not counted as the function's work (the benchmark measures the functions'
 * CPU on their own threads).
 */
final class EmfCapture implements AutoCloseable {

    /** How every EMF document starts: its metadata member first, as the EMF library serializes it. */
    static final String EMF_PREFIX = "{\"_aws\":";
    private static final byte[] EMF_PREFIX_BYTES = EMF_PREFIX.getBytes(StandardCharsets.UTF_8);
    /** Writes waiting to be sorted; a writer waits when this many are (a stuck stdout holds the writers back, not the heap). */
    private static final int PENDING_LIMIT = 16_384;
    /** Markers in the queue, by identity: the writer flushed, the capture ends. */
    private static final byte[] FLUSH = new byte[0];
    private static final byte[] END = new byte[0];

    private final Path file;
    private final PrintStream previous;
    private final OutputStream metrics;
    private final BlockingQueue<byte[]> pending = new ArrayBlockingQueue<>(PENDING_LIMIT);
    private final Thread sorter;

    private EmfCapture(Path file, PrintStream previous, OutputStream metrics) {
        this.file = file;
        this.previous = previous;
        this.metrics = metrics;
        this.sorter = Thread.ofPlatform().daemon().name("local-stdout").unstarted(new LineSorter()::run);
    }

    /** Starts routing stdout's EMF lines to {@code file} (created, or emptied). */
    static EmfCapture install(Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            OutputStream metrics = new BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE), 64 * 1024);
            PrintStream previous = System.out;
            EmfCapture capture = new EmfCapture(file, previous, metrics);
            capture.sorter.start();
            System.setOut(new PrintStream(capture.new Handover(), true, StandardCharsets.UTF_8));
            return capture;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the metrics file " + file, e);
        }
    }

    Path file() {
        return file;
    }

    /** stdout as it was, once everything written before is sorted; the file closed. */
    @Override
    public void close() {
        System.out.flush();
        System.setOut(previous);
        enqueue(END);
        try {
            sorter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            metrics.close();
        } catch (IOException e) {
            previous.println("metrics file " + file + " did not close: " + e);
        }
    }

    private void enqueue(byte[] bytes) {
        try {
            pending.put(bytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while writing to stdout", e);
        }
    }

    /** What System.out writes into: a copy of the bytes, queued for the sorter. */
    private final class Handover extends OutputStream {
        @Override
        public void write(int b) {
            enqueue(new byte[] {(byte) b});
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            if (length > 0) {
                enqueue(Arrays.copyOfRange(bytes, offset, offset + length));
            }
        }

        @Override
        public void flush() {
            enqueue(FLUSH);
        }
    }

    /** Splits what was written into lines, and sends each whole line where it belongs. */
    private final class LineSorter {
        private final ByteArrayOutputStream line = new ByteArrayOutputStream(512);

        void run() {
            try {
                for (byte[] bytes = pending.take(); bytes != END; bytes = pending.take()) {
                    if (bytes == FLUSH) {
                        flush();
                    } else {
                        sort(bytes);
                    }
                    if (pending.isEmpty()) {
                        flushMetrics();
                    }
                }
                flush();
                flushMetrics();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void sort(byte[] bytes) {
            int start = 0;
            for (int i = 0; i < bytes.length; i++) {
                if (bytes[i] == '\n') {
                    line.write(bytes, start, i + 1 - start);
                    route();
                    start = i + 1;
                }
            }
            line.write(bytes, start, bytes.length - start);
        }

        /** A line without its end yet stays until it has one, unless it cannot be EMF. */
        private void flush() {
            if (line.size() > 0 && !startsLikeEmf()) {
                previous.write(line.toByteArray(), 0, line.size());
                line.reset();
            }
            previous.flush();
        }

        private void route() {
            byte[] bytes = line.toByteArray();
            line.reset();
            if (bytes.length >= EMF_PREFIX_BYTES.length && Arrays.equals(bytes, 0, EMF_PREFIX_BYTES.length, EMF_PREFIX_BYTES, 0, EMF_PREFIX_BYTES.length)) {
                try {
                    metrics.write(bytes);
                } catch (IOException e) {
                    previous.println("metrics file " + file + " not written: " + e);
                }
            } else {
                previous.write(bytes, 0, bytes.length);
            }
        }

        private void flushMetrics() {
            try {
                metrics.flush();
            } catch (IOException e) {
                previous.println("metrics file " + file + " not flushed: " + e);
            }
            previous.flush();
        }

        private boolean startsLikeEmf() {
            byte[] bytes = line.toByteArray();
            int length = Math.min(bytes.length, EMF_PREFIX_BYTES.length);
            return Arrays.equals(bytes, 0, length, EMF_PREFIX_BYTES, 0, length);
        }
    }
}
