package dev.runner.bench.coldstart;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What a checkpoint's image is made of, read from the process's memory map just before CRIU dumps
 * it: CRIU writes the pages a process has in memory that are its own (anonymous, or private copies of
 * a file's), which {@code /proc/<pid>/smaps} counts as {@code Anonymous}. The Java heap's share is
 * the anonymous pages inside its reservation; the rest is class metadata, compiled code, thread
 * stacks and the JVM's and libraries' native memory.
 */
final class ImageParts {

    private ImageParts() {}

    /** Anonymous bytes of {@code pid}'s mappings within {@code [from, to)}; -1 if the map cannot be read or nothing lies there. */
    static long heapBytes(long pid, long from, long to) {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps"));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        long bytes = 0;
        boolean inside = false;
        boolean any = false;
        for (String line : lines) {
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            if (dash > 0 && space > dash && isHex(line, 0, dash)) {
                long start = Long.parseUnsignedLong(line.substring(0, dash), 16);
                long end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
                inside = start >= from && end <= to;
                any |= inside;
            } else if (inside && line.startsWith("Anonymous:")) {
                bytes += Long.parseLong(line.substring("Anonymous:".length()).replace("kB", "").strip()) * 1024;
            }
        }
        return any ? bytes : -1;
    }

    private static boolean isHex(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            if (Character.digit(text.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }
}
